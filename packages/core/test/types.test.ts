/**
 * Compile-time guarantees of the typed API. `tsc -p tsconfig.test.json` (part of `pnpm test`) fails if
 * any `@ts-expect-error` below stops being an error; vitest runs the runtime half.
 */
import { describe, expectTypeOf, it } from 'vitest'
import {
  type AbortSignalLike,
  createLoop,
  type HandlerContext,
  type Message,
  type PostResult,
  type ProcessSignal,
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

describe('types that stand in for Node.js ones in the published declarations', () => {
  it('ProcessSignal is NodeJS.Signals, AbortSignalLike the global AbortSignal where one is declared', () => {
    expectTypeOf<ProcessSignal>().toEqualTypeOf<NodeJS.Signals>()
    expectTypeOf<AbortSignalLike>().toEqualTypeOf<AbortSignal>()
    expectTypeOf<HandlerContext['signal']>().toEqualTypeOf<AbortSignal>()
  })
})
