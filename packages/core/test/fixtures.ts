import { createLoop, type LoopOptions, VirtualClock } from '../src/index.js'

/** The message map the unit tests share. */
export interface Messages {
  'order.paid': { orderId: string; amount: number }
  'order.updated': { orderId: string; status: 'paid' | 'refunded' | 'pending' }
  work: number
}

/** A loop on virtual time, plus the clock that drives it. */
export function virtualLoop(options: LoopOptions = {}) {
  const clock = new VirtualClock()
  const loop = createLoop<Messages>({ clock, logger: false, ...options })
  return { clock, loop }
}

/** Runs `fn`, returns what it threw (fails the test if it did not throw). */
export function thrown(fn: () => unknown): Error {
  try {
    fn()
  } catch (error) {
    return error as Error
  }
  throw new Error('expected a throw')
}

/** Collects errors the loop re-throws on a microtask (as it does for throwing listeners and hooks). */
export function catchRethrown(): { errors: unknown[]; restore: () => void } {
  const errors: unknown[] = []
  const original = globalThis.queueMicrotask
  globalThis.queueMicrotask = (fn) =>
    original(() => {
      try {
        fn()
      } catch (error) {
        errors.push(error)
      }
    })
  return { errors, restore: () => (globalThis.queueMicrotask = original) }
}
