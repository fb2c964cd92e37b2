/**
 * Compile-time guarantees of the typed API. `tsc -p tsconfig.test.json` (part of `pnpm test`) fails if
 * any `@ts-expect-error` below stops being an error; vitest runs the runtime half.
 */
import { describe, expectTypeOf, it } from 'vitest'
import {
  type AbortSignalLike,
  createLoop,
  type HandlerContext,
  type Loop,
  type Message,
  type PostResult,
  type ProcessSignal,
  type RegisterOptions,
  type RequestOptions,
} from '../src/index.js'
import type { Messages } from './fixtures.js'

describe('typed API', () => {
  it('types payloads per message type', () => {
    const loop = createLoop<Messages>({ autoStart: false })
    loop.on('work', () => {})
    loop.on('order.paid', (msg, ctx) => {
      expectTypeOf(msg.payload).toEqualTypeOf<{ orderId: string; amount: number }>()
      expectTypeOf(msg.type).toEqualTypeOf<'order.paid'>()
      expectTypeOf(ctx).toEqualTypeOf<HandlerContext<Messages>>()
      // @ts-expect-error — a follow-up with the wrong payload does not compile
      ctx.post('order.updated', { orderId: 'o', status: 'lost' })
    })
    const m = loop.post('order.paid', { orderId: 'o-1', amount: 1 })
    expectTypeOf(m).toEqualTypeOf<Message<Messages, 'order.paid'>>()
    expectTypeOf(loop.tryPost('work', 1)).toEqualTypeOf<PostResult<Messages, 'work'>>()
    expectTypeOf(loop.send('work', 1)).resolves.toEqualTypeOf<Message<Messages, 'work'>>()
  })

  it('rejects unknown types and wrong payloads at compile time', () => {
    const loop = createLoop<Messages>({ autoStart: false })
    // @ts-expect-error — unknown message type
    expectTypeOf(() => loop.on('order.shipped', () => {})).toBeFunction()
    // @ts-expect-error — wrong payload shape
    expectTypeOf(() => loop.post('order.paid', { orderId: 'o-1' })).toBeFunction()
    // @ts-expect-error — wrong payload type
    expectTypeOf(() => loop.post('work', 'one')).toBeFunction()
    // @ts-expect-error — priority outside 0..9
    expectTypeOf(() => loop.post('work', 1, { priority: 12 })).toBeFunction()
  })

  it('restricts route handlers to the route keys the selector can produce', () => {
    const loop = createLoop<Messages>({ autoStart: false })
    const router = loop.route('order.updated', (msg) => msg.payload.status)
    router.on('paid', (msg) => {
      expectTypeOf(msg.payload.status).toEqualTypeOf<'paid' | 'refunded' | 'pending'>()
    })
    // @ts-expect-error — 'shipped' is not a route the selector can produce
    router.on('shipped', () => {})
  })
})

describe('request() results', () => {
  interface Results {
    'order.paid': { receipt: string }
    work: number
  }

  it('types a request with its handler result from the results map', async () => {
    const loop = createLoop<Messages, Results>({ autoStart: false })
    loop.on('order.paid', (msg) => ({ receipt: msg.payload.orderId }))
    loop.on('work', async (msg) => msg.payload * 2)
    loop.on('order.updated', () => 'anything: a type without a declared result')
    expectTypeOf(loop.request('order.paid', { orderId: 'o', amount: 1 })).resolves.toEqualTypeOf<{ receipt: string }>()
    expectTypeOf(loop.request('work', 1)).resolves.toEqualTypeOf<number>()
    expectTypeOf(loop.request('order.updated', { orderId: 'o', status: 'paid' })).resolves.toBeUnknown()
    // An explicit result type still wins, as before results maps.
    expectTypeOf(
      loop.request<'order.updated', string>('order.updated', { orderId: 'o', status: 'paid' }),
    ).resolves.toEqualTypeOf<string>()
  })

  it('refuses a handler (or a route handler) whose return does not match the declared result', () => {
    const loop = createLoop<Messages, Results>({ autoStart: false })
    // @ts-expect-error — `work` declares a number
    expectTypeOf(() => loop.on('work', () => 'two')).toBeFunction()
    // @ts-expect-error — a promise of the wrong result
    expectTypeOf(() => loop.on('work', async () => 'two')).toBeFunction()
    const router = loop.route('order.paid', (msg) => (msg.payload.amount > 100 ? 'big' : 'small'))
    router.on('big', () => ({ receipt: 'r' }))
    // @ts-expect-error — a route handler owes the type's result too
    expectTypeOf(() => router.otherwise(() => undefined)).toBeFunction()
  })

  it('leaves loops without a results map as they were: any return, requests resolve to unknown', () => {
    const loop = createLoop<Messages>({ autoStart: false })
    loop.on('work', () => 'anything')
    expectTypeOf(loop.request('work', 1)).resolves.toBeUnknown()
    expectTypeOf(loop).toEqualTypeOf<Loop<Messages>>()
  })

  it('resolves in code generic over the message map (a wrapper such as @flowing/nats)', () => {
    function wrap<M extends object, T extends Extract<keyof M, string>>(loop: Loop<M>, type: T, f: () => unknown) {
      return loop.on(type, () => f())
    }
    expectTypeOf(wrap).toBeFunction()
  })

  it('exports the options of request()', () => {
    expectTypeOf<RequestOptions['waitTimeoutMs']>().toEqualTypeOf<number | undefined>()
    expectTypeOf<RequestOptions>().toMatchTypeOf<{ key?: string | number | undefined }>()
  })
})

describe('compensate', () => {
  it("receives the registered type's message, typed like the handler's", () => {
    const loop = createLoop<Messages>({ autoStart: false })
    loop.on('order.paid', () => {}, {
      timeoutMs: 1_000,
      compensate: (msg) => {
        expectTypeOf(msg).toEqualTypeOf<Message<Messages, 'order.paid'>>()
        expectTypeOf(msg.payload.amount).toEqualTypeOf<number>()
      },
    })
    loop.route('work', (msg) => (msg.payload > 0 ? 'positive' : 'other'), {
      compensate(msg) {
        expectTypeOf(msg.payload).toEqualTypeOf<number>()
      },
    })
    // @ts-expect-error — `order.paid` has no `status`
    expectTypeOf(() => loop.on('order.paid', () => {}, { compensate: (msg) => msg.payload.status })).toBeFunction()
    expectTypeOf<RegisterOptions<Messages, 'work'>>().toMatchTypeOf<RegisterOptions>()
  })
})

describe('types that stand in for Node.js ones in the published declarations', () => {
  it('ProcessSignal is NodeJS.Signals, AbortSignalLike the global AbortSignal where one is declared', () => {
    expectTypeOf<ProcessSignal>().toEqualTypeOf<NodeJS.Signals>()
    expectTypeOf<AbortSignalLike>().toEqualTypeOf<AbortSignal>()
    expectTypeOf<HandlerContext['signal']>().toEqualTypeOf<AbortSignal>()
  })
})
