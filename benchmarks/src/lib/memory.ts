/**
 * Bytes per queued message: the heap growth of a paused queue holding `n` messages with a small
 * integer payload, divided by `n`. Measured between two full collections, so only what the queue
 * retains counts — not the garbage a post leaves behind.
 *
 * @module
 */
import { expectEqual, withDeadline } from './check.js'
import { collect, heapUsed } from './gc.js'
import type { Subject } from './subject.js'
import type { Workload } from './workload.js'

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/**
 * Fills a paused `subject` with the whole workload and reports (heapUsed after − before) / n. Then
 * starts it and checks every message is processed, so the figure belongs to a queue that works.
 *
 * @throws BenchError when the queue then processes the wrong count
 */
export async function bytesPerMessage(subject: Subject, workload: Workload, deadlineMs: number): Promise<number> {
  const session = subject.open(workload, { paused: true })
  await nextTurn() // let the queue's own startup microtasks settle before the baseline
  collect()
  const before = heapUsed()
  session.postRange(0, workload.n)
  // Promise-based queues resolve thenables a microtask later; measure the settled, waiting state.
  await nextTurn()
  collect()
  const after = heapUsed()
  session.start()
  await withDeadline(session.idle(), deadlineMs, () => `${subject.label} (memory run) did not drain`)
  const report = await session.close(workload.n)
  expectEqual(`${subject.label} (memory run): messages processed`, report.processed, workload.n)
  return (after - before) / workload.n
}
