/**
 * Section 4 — `loop.cancel(message)` on queued messages: post N keyed messages to a paused loop,
 * cancel every other one (by the message `post()` returned), start and drain; against the same
 * without cancels, and N/2 posted. Plus a few cancels by id (documented O(n)) on the same backlog.
 *
 * @module
 */
import { createLoop, type Message } from '@flowing/core'
import { expectEqual } from '../lib/check.js'
import type { BenchMessages } from '../lib/flowing.js'
import type { Workload } from '../lib/workload.js'
import { WORKERS } from './limiter-cost.js'
import type { FlowCase } from './rounds.js'

/** Cancels by id timed on each by-id run (each searches every holder). */
export const BY_ID_CANCELS = 200

/** ns per cancel() call of the last run of each cancel case (the cancel loop alone). */
export const cancelCallNs = new Map<string, number[]>()

type Cancel = 'none' | 'half' | 'by-id'

async function runCancel(workload: Workload, n: number, how: Cancel, posted: number): Promise<number> {
  const loop = createLoop<BenchMessages>({ capacity: Math.max(1, posted), workers: WORKERS, autoStart: false })
  let processed = 0
  loop.on('tick', async () => {
    processed++
  })
  const messages: Message<BenchMessages>[] = []
  const t0 = performance.now()
  for (let i = 0; i < posted; i++) messages.push(loop.post('tick', i, { key: workload.keys[i] as number }))
  const tc = performance.now()
  const cancels = how === 'half' ? cancelHalf(loop, messages) : how === 'by-id' ? cancelById(loop, messages) : 0
  const tcEnd = performance.now()
  void loop.start()
  await loop.drain()
  const seconds = (performance.now() - t0) / 1000
  if (cancels > 0) {
    const list = cancelCallNs.get(how) ?? []
    list.push(((tcEnd - tc) * 1e6) / cancels)
    cancelCallNs.set(how, list)
  }
  const what = `cancel ${how} (n=${n})`
  const { counters } = loop.metrics()
  expectEqual(`${what}: metrics.counters.cancelled`, counters.cancelled, cancels)
  expectEqual(`${what}: handler calls`, processed, posted - cancels)
  expectEqual(`${what}: metrics.counters.succeeded`, counters.succeeded, posted - cancels)
  await loop.stop()
  return seconds
}

function cancelHalf(loop: { cancel(m: Message<BenchMessages>): string }, messages: Message<BenchMessages>[]): number {
  let n = 0
  for (let i = 0; i < messages.length; i += 2)
    if (loop.cancel(messages[i] as Message<BenchMessages>) === 'cancelled') n++
  return n
}

function cancelById(loop: { cancel(id: string): string }, messages: Message<BenchMessages>[]): number {
  const count = Math.min(BY_ID_CANCELS, messages.length)
  const step = Math.max(1, Math.floor(messages.length / count))
  let n = 0
  for (let i = messages.length - 1, k = 0; k < count && i >= 0; i -= step, k++) {
    if (loop.cancel((messages[i] as Message<BenchMessages>).id) === 'cancelled') n++
  }
  return n
}

/** The section's cases; times are per posted message. */
export function cancelCases(workload: Workload): FlowCase[] {
  return [
    { id: 'plain', label: 'post N, drain N (no cancel)', run: (n) => runCancel(workload, n, 'none', n) },
    { id: 'plain-half', label: 'post N/2, drain N/2 (no cancel)', run: (n) => runCancel(workload, n, 'none', n >> 1) },
    {
      id: 'half',
      label: 'post N, cancel(message) every other, drain N/2',
      run: (n) => runCancel(workload, n, 'half', n),
    },
    {
      id: 'by-id',
      label: `post N, cancel(id) ×${BY_ID_CANCELS}, drain the rest`,
      run: (n) => runCancel(workload, n, 'by-id', n),
    },
  ]
}
