/**
 * The in-process loop of `@flowing/core` under the transport contract. Its durable state is a journal
 * `MemoryStore`: a restart reopens it (the old handle may not write any more, as a dead process
 * cannot), and a kill abandons the loop — paused, its handlers never run or finish again — the crash
 * model of core's durable-loop contract.
 */
import { createLoop, type HandlerContext, type Loop, MemoryStore, type Message } from '@flowing/core'
import {
  CONTRACT_TYPES,
  type ContractMessages,
  type PostOutcome,
  type TransportCapabilities,
  type TransportFactory,
  type TransportHandler,
  type TransportPostOptions,
  type TransportUnderTest,
} from './transport.js'

type M = ContractMessages
const never = new Promise<never>(() => {})

/** Opens a core loop on a fresh journal store; restarts reopen it. */
export function coreTransport(): TransportFactory<M> {
  return { capabilities: CORE_CAPABILITIES, open: async () => new CoreTransport(new MemoryStore('contract')) }
}

const CORE_CAPABILITIES: TransportCapabilities = {
  crossProcess: false,
  reconnect: false,
  notApplicable: {
    crossProcess:
      'one in-process loop owns its journal; a consumer group needs a shared broker (core on a shared PostgreSQL journal is out of scope)',
    reconnect: 'the in-process loop has no broker connection to lose',
  },
}

class CoreTransport implements TransportUnderTest<M> {
  readonly capabilities = CORE_CAPABILITIES
  readonly #store: MemoryStore
  readonly #loop: Loop<M>
  readonly #handlers = new Map<string, TransportHandler<never>>()
  #state: 'new' | 'accepting' | 'running' | 'stopped' | 'dead' = 'new'

  constructor(store: MemoryStore) {
    this.#store = store
    this.#loop = createLoop<M>({ store, logger: false, workers: 4, retry: { maxAttempts: 3, baseMs: 20, jitter: 0 } })
    for (const type of CONTRACT_TYPES) this.#loop.on(type, (m, ctx) => this.#dispatch(type, m, ctx))
  }

  on<T extends keyof M & string>(type: T, handler: TransportHandler<M[T]>): void {
    this.#handlers.set(type, handler as TransportHandler<never>)
  }

  async start(): Promise<void> {
    if (this.#state === 'accepting') this.#loop.resume()
    else this.#loop.start()
    this.#state = 'running'
  }

  async post<T extends keyof M & string>(type: T, payload: M[T], options?: TransportPostOptions): Promise<PostOutcome> {
    this.#accepting()
    const result = this.#loop.tryPost(type, payload, options)
    if (result.ok) {
      await this.#loop.flushed()
      return { outcome: 'accepted', id: result.message.id }
    }
    if (result.status === 'duplicate') return { outcome: 'duplicate' }
    throw result.status === 'dropped' ? new Error('dropped') : result.error
  }

  async postDelayed<T extends keyof M & string>(
    type: T,
    payload: M[T],
    delayMs: number,
    options?: TransportPostOptions,
  ): Promise<void> {
    this.#accepting()
    this.#loop.postDelayed(type, payload, delayMs, options)
    await this.#loop.flushed()
  }

  // `drain()` of core does not wait for delayed messages not due yet: the contract's drain does.
  async drain(): Promise<void> {
    for (;;) {
      await this.#loop.drain()
      const { delayed, retrying } = this.#loop.metrics().gauges
      if (delayed === 0 && retrying === 0) return
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }

  async stop(options?: { readonly finish?: boolean }): Promise<void> {
    this.#state = 'stopped'
    await this.#loop.stop(options?.finish === false ? { deadlineMs: 0 } : undefined)
  }

  async kill(): Promise<void> {
    if (this.#state === 'running') this.#loop.pause()
    this.#state = 'dead'
  }

  async deadLetterCount(): Promise<number> {
    return this.#loop.deadLetters.size
  }

  async replayDeadLetters(): Promise<number> {
    const { replayed } = this.#loop.deadLetters.replay()
    await this.#loop.flushed()
    return replayed.length
  }

  async restart(): Promise<TransportUnderTest<M>> {
    return new CoreTransport(this.#store.reopen())
  }

  async dispose(): Promise<void> {
    if (this.#state === 'stopped') return
    const dead = this.#state === 'dead'
    this.#state = 'stopped'
    // A dead loop's store handle is superseded: its last commit fails, as it should.
    await this.#loop.stop({ deadlineMs: 0 }).catch((error: unknown) => {
      if (!dead) throw error
    })
  }

  // Posts are accepted once the loop recovered its journal: started, and paused until `start()`.
  #accepting(): void {
    if (this.#state !== 'new') return
    this.#loop.start().pause()
    this.#state = 'accepting'
  }

  #dispatch(type: string, m: Message<M>, ctx: HandlerContext<M>): void | Promise<void> {
    if (this.#state === 'dead') return never
    const handler = this.#handlers.get(type)
    if (handler === undefined) throw new Error(`the contract registered no handler for ${type}`)
    return handler({ id: m.traceId, payload: m.payload as never, attempt: ctx.attempt }) // a root's trace id is its id
  }
}
