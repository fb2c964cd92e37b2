/**
 * The distributed loop of `@flowing/nats` under the transport contract. Each "process" is a
 * `createNatsLoop` of the test's loop name with a connection of its own through a {@link TcpProxy}: a
 * restart or a peer is another one of the same name on the same server; a kill cuts its proxy, so the
 * server sees the connection reset and nothing acknowledged — as after a kill -9.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { createNatsLoop, type NatsLoop, type NatsLoopOptions } from '../../src/index.js'
import type { NatsServer } from '../server.js'
import { TcpProxy } from './tcp-proxy.js'
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

/** Options of every process (ack_wait 1 s: a dead process's message goes to another a second later). */
export const CONTRACT_NATS_OPTIONS = {
  partitions: 4,
  ackWaitMs: 1_000,
  loop: { retry: { maxAttempts: 3, baseMs: 20, jitter: 0 }, logger: false },
  onError: () => {},
} satisfies Partial<NatsLoopOptions>

// The client's wait between reconnection attempts: a restarted broker (back in ~200 ms) is reached a
// second after it went away, so a call made as it comes back meets a client still reconnecting.
const RECONNECT_WAIT_MS = 1_000

let names = 0

/** Opens a NATS loop of a new name on the file's server; restarts and peers share the name. */
export function natsTransport(server: () => NatsServer): TransportFactory<M> {
  return { capabilities: NATS_CAPABILITIES, open: () => NatsTransport.open(server, `contract-${names++}`) }
}

const NATS_CAPABILITIES: TransportCapabilities = { crossProcess: true, reconnect: true }

class NatsTransport implements TransportUnderTest<M> {
  readonly capabilities = NATS_CAPABILITIES
  readonly #server: () => NatsServer
  readonly #name: string
  readonly #proxy: TcpProxy
  readonly #nc: NatsConnection
  readonly #loop: NatsLoop<M>
  readonly #handlers = new Map<string, TransportHandler<never>>()
  #state: 'idle' | 'running' | 'stopped' | 'dead' | 'disposed' = 'idle'
  #reconnects = 0

  private constructor(server: () => NatsServer, name: string, proxy: TcpProxy, nc: NatsConnection, loop: NatsLoop<M>) {
    this.#server = server
    this.#name = name
    this.#proxy = proxy
    this.#nc = nc
    this.#loop = loop
    void (async () => {
      for await (const s of nc.status()) if (s.type === 'reconnect') this.#reconnects++
    })()
    for (const type of CONTRACT_TYPES) {
      loop.on(type, (m, ctx) => {
        if (this.#state === 'dead') return never
        const handler = this.#handlers.get(type)
        if (handler === undefined) throw new Error(`the contract registered no handler for ${type}`)
        // The posted id travels as a root message's trace id (a handler's `m.id` is its delivery's).
        return handler({ id: m.traceId, payload: m.payload as never, attempt: ctx.attempt })
      })
    }
  }

  static async open(server: () => NatsServer, name: string): Promise<NatsTransport> {
    const proxy = await TcpProxy.start(server().port)
    const nc = await connect({ servers: proxy.url, maxReconnectAttempts: -1, reconnectTimeWait: RECONNECT_WAIT_MS })
    const loop = await createNatsLoop<M>({ ...CONTRACT_NATS_OPTIONS, connection: nc, name })
    return new NatsTransport(server, name, proxy, nc, loop)
  }

  on<T extends keyof M & string>(type: T, handler: TransportHandler<M[T]>): void {
    this.#handlers.set(type, handler as TransportHandler<never>)
  }

  async start(): Promise<void> {
    this.#state = 'running'
    await this.#loop.start()
  }

  async post<T extends keyof M & string>(type: T, payload: M[T], options?: TransportPostOptions): Promise<PostOutcome> {
    const result = await this.#loop.tryPost(type, payload, options)
    if (result.ok) return { outcome: 'accepted', id: result.message.id }
    if (result.status === 'duplicate') return { outcome: 'duplicate' }
    throw result.error
  }

  async postDelayed<T extends keyof M & string>(
    type: T,
    payload: M[T],
    delayMs: number,
    options?: TransportPostOptions,
  ): Promise<void> {
    await this.#loop.postDelayed(type, payload, delayMs, options)
  }

  drain(): Promise<void> {
    return this.#loop.drain()
  }

  async stop(options?: { readonly finish?: boolean }): Promise<void> {
    this.#state = 'stopped'
    await this.#loop.stop(options?.finish === false ? { deadlineMs: 0 } : undefined)
  }

  async kill(): Promise<void> {
    this.#state = 'dead'
    this.#proxy.cut()
  }

  deadLetterCount(): Promise<number> {
    return this.#loop.deadLetters.count()
  }

  async replayDeadLetters(): Promise<number> {
    return (await this.#loop.deadLetters.replay()).replayed.size
  }

  restart(): Promise<TransportUnderTest<M>> {
    return NatsTransport.open(this.#server, this.#name)
  }

  peer(): Promise<TransportUnderTest<M>> {
    return NatsTransport.open(this.#server, this.#name)
  }

  async restartBroker(options?: { readonly reconnected?: boolean }): Promise<void> {
    const before = this.#reconnects
    if (options?.reconnected === false) {
      // This process may not reconnect before the caller's next call: its way back opens 500 ms later.
      this.#proxy.refusing(true)
      await this.#server().restart()
      setTimeout(() => this.#proxy.refusing(false), 500).unref()
      return
    }
    await this.#server().restart()
    const deadline = Date.now() + 15_000
    while (this.#reconnects === before) {
      if (Date.now() > deadline) throw new Error('not reconnected 15 s after the broker restarted')
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }

  async dispose(): Promise<void> {
    const state = this.#state
    this.#state = 'disposed'
    if (state === 'disposed') return
    // A dead process is never stopped (its stop would wait for a server it cannot reach): only closed.
    if (state === 'idle' || state === 'running') await this.#loop.stop({ deadlineMs: 0 })
    await this.#nc.close()
    await this.#proxy.close()
  }
}
