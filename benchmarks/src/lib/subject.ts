/**
 * What the harness needs from a queue under test, and the timed run built on it.
 *
 * Each subject writes its own posting loop (`postRange`): a loop shared by all subjects would make
 * its call site megamorphic and charge every subject for that, the fastest ones most.
 *
 * @module
 */
import { BenchError, expectEqual, withDeadline } from './check.js'
import { collect } from './gc.js'
import { feed, type Mode, type Workload } from './workload.js'

/** Queue-wait percentiles (ms), from subjects that measure them (Flowing's `loop.metrics()`). */
export interface QueueWait {
  readonly p50: number
  readonly p99: number
}

/** What a session reports once drained and checked. */
export interface SessionReport {
  /** Messages the handler ran. */
  readonly processed: number
  /** Queue-wait percentiles, when the subject measures them. */
  readonly queueWait?: QueueWait
}

/** One queue instance with a counting no-op async handler. */
export interface Session {
  /** Posts workload messages `from … to − 1` (payload `i`, key `keys[i]`, priority `priorities[i]`). */
  postRange(from: number, to: number): void
  /** Starts a session opened paused. */
  start(): void
  /** Resolves once every posted message has been processed. */
  idle(): Promise<void>
  /**
   * Shuts the queue down and checks the subject's own counters against `posted`.
   * @throws BenchError on a count mismatch
   */
  close(posted: number): Promise<SessionReport>
}

/** A queue under test. */
export interface Subject {
  /** Short stable id, matched by `--only`. */
  readonly id: string
  /** Row label in the tables. */
  readonly label: string
  /** Measured in the bytes-per-queued-message table. */
  readonly memory: boolean
  /** Opens a fresh queue; `paused` holds every message until `start()`. */
  open(workload: Workload, options: { readonly paused: boolean }): Session
}

/** One timed run. */
export interface Sample {
  /** Post + drain, seconds. */
  readonly seconds: number
  /** The synchronous posting alone, seconds (burst mode; in streamed mode the sum of all batches). */
  readonly postSeconds: number
  readonly queueWait?: QueueWait
}

/**
 * Times `workload` through a fresh session of `subject`: from the first post until the queue is idle.
 * Collects garbage first so one run's leftovers are not charged to the next.
 *
 * @throws BenchError when the processed count or the subject's counters disagree with the posts
 */
export async function timeRun(subject: Subject, workload: Workload, mode: Mode, deadlineMs: number): Promise<Sample> {
  const session = subject.open(workload, { paused: false })
  let postSeconds = 0
  const postRange = (from: number, to: number): void => {
    const t = performance.now()
    session.postRange(from, to)
    postSeconds += performance.now() - t
  }
  collect()
  const t0 = performance.now()
  await withDeadline(
    feed(postRange, workload.n, mode).then(() => session.idle()),
    deadlineMs,
    () => `${subject.label} (${mode}) did not drain ${workload.n} messages`,
  )
  const seconds = (performance.now() - t0) / 1000
  const report = await session.close(workload.n)
  expectEqual(`${subject.label} (${mode}): messages processed`, report.processed, workload.n)
  if (!(seconds > 0)) throw new BenchError(`${subject.label} (${mode}): non-positive duration ${seconds}`)
  const base = { seconds, postSeconds: postSeconds / 1000 }
  return report.queueWait === undefined ? base : { ...base, queueWait: report.queueWait }
}
