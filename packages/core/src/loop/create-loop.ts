/**
 * `createLoop()`, the way to make a {@link Loop}.
 *
 * @module
 */
import type { MessageMap, NoResults, ResultMap } from '../contracts/message.js'
import type { LoopOptions } from '../contracts/options.js'
import { Loop } from './loop.js'

/**
 * Creates a message loop.
 *
 * @typeParam M - your message map (type → payload); makes `post` and handlers type-checked
 * @typeParam Results - optional: what handlers return, by type ({@link ResultMap}); types `request()`
 * @throws InvalidArgumentError for a bad option
 *
 * @example
 * ```ts
 * interface Messages { 'order.paid': { orderId: string; amount: number } }
 * const loop = createLoop<Messages>({ capacity: 10_000, workers: 8 })
 * loop.on('order.paid', async (msg) => { await charge(msg.payload) })
 * loop.post('order.paid', { orderId: 'o-1', amount: 42 }, { key: 'o-1', priority: 1 })
 * await loop.stop()
 * ```
 * @group Loop
 */
export function createLoop<M extends MessageMap = MessageMap, Results extends ResultMap<M> = NoResults>(
  options?: LoopOptions,
): Loop<M, Results> {
  return new Loop<M, Results>(options)
}
