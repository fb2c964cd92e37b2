/**
 * Bytes per pending timer: V8 heap plus `ArrayBuffer` memory (the wheel's node records live there,
 * outside the JS heap) after a full collection, with `n` timers pending, minus the same before,
 * divided by `n`.
 *
 * @module
 */
import { type Timeout, TimingWheel } from '@flowing/timing-wheel'
import { expectEqual } from './check.js'
import { collect } from './gc.js'
import type { TimerWorkload } from './wheel-ops.js'

/** Live bytes: JS heap in use plus `ArrayBuffer` backing stores. */
function liveBytes(): number {
  collect()
  const { heapUsed, arrayBuffers } = process.memoryUsage()
  return heapUsed + arrayBuffers
}

/** What is kept while the timers are pending. */
export type MemoryCase = 'wheel, handles dropped' | 'wheel, handles kept' | 'wheel, add() ids kept' | 'setTimeout'

/** Every memory case, in table order. */
export const MEMORY_CASES: readonly MemoryCase[] = [
  'wheel, handles dropped',
  'wheel, handles kept',
  'wheel, add() ids kept',
  'setTimeout',
]

/** Bytes per pending timer for one case. Cancels everything afterwards and checks the count. */
export function bytesPerTimer(kind: MemoryCase, w: TimerWorkload): number {
  const { n, delays } = w
  const before = liveBytes()
  let after = Number.NaN
  if (kind === 'setTimeout') {
    const handles: NodeJS.Timeout[] = []
    for (let i = 0; i < n; i++) handles.push(setTimeout(noop, delays[i] as number))
    after = liveBytes()
    for (const h of handles) clearTimeout(h)
  } else {
    const wheel = new TimingWheel<number>({ maxPending: n })
    if (kind === 'wheel, handles dropped') for (let i = 0; i < n; i++) wheel.schedule(delays[i] as number, i)
    else if (kind === 'wheel, handles kept') {
      const handles: Timeout<number>[] = []
      for (let i = 0; i < n; i++) handles.push(wheel.schedule(delays[i] as number, i))
      after = liveBytes()
      expectEqual(`memory (${kind}): handles kept`, handles.length, n)
    } else {
      const ids = new Float64Array(n)
      const now = wheel.now()
      for (let i = 0; i < n; i++) ids[i] = wheel.add(now + (delays[i] as number), i)
      after = liveBytes()
      expectEqual(`memory (${kind}): ids kept`, ids.length, n)
    }
    if (Number.isNaN(after)) after = liveBytes()
    expectEqual(`memory (${kind}): timers pending`, wheel.size, n)
    expectEqual(`memory (${kind}): timers cleared`, wheel.clear().length, n)
  }
  return (after - before) / n
}

function noop(): void {}
