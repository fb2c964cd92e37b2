/**
 * The feature-cost rows: one Flowing loop per row, the same no-op async handler and workload, and one
 * feature (or all of them) turned on, so each row's ns per message reads against the plain row's.
 *
 * Every row's loop has `capacity: 2 × N` and 8 workers: in burst mode the whole backlog then fills at
 * most half the queue, so backpressure (whose first mark is 60 %) admits everything and every row
 * processes the same N messages.
 *
 * @module
 */
import { createLoop, type Loop, type LoopOptions } from '@flowing/core'
import { BenchError, expectEqual } from './check.js'
import { type BenchMessages, checkLoopAtRest } from './flowing.js'
import type { Session, SessionReport, Subject } from './subject.js'
import { idempotencyKeys, stringKeys, type Workload } from './workload.js'

/** What each post carries besides the payload. */
export type PostShape = 'nothing' | 'int-key' | 'string-key' | 'idempotency-key'

/** One row of the feature-cost table. */
export interface FeatureRow {
  /** Stable case id (`--only`). */
  readonly id: string
  /** Row label. */
  readonly label: string
  /** What the row sets, in words, for the table. */
  readonly sets: string
  /** Loop options over the shared ones (`capacity: 2 × N`, `workers: 8`). */
  readonly options: LoopOptions
  /** What each post passes. */
  readonly post: PostShape
  /**
   * Checks, once the loop is at rest and its counters were checked, that the feature really was on
   * (it may post and drain more messages).
   * @throws BenchError when it was not
   */
  readonly check?: (loop: Loop<BenchMessages>, what: string, workload: Workload) => Promise<void>
}

/** The baseline row of the table: no key, no priority, no option. */
export const PLAIN_ROW = 'feature-plain'
/** The row the ≤ 1.5× target is about. */
export const ALL_ON_ROW = 'feature-all-on'
/** The retry policy of the retry and all-on rows (the handler never fails: no retry happens). */
const RETRY = { maxAttempts: 3 } as const
/** The handler deadline of the timeout and all-on rows: a watchdog guard per attempt, never fired. */
const TIMEOUT_MS = 30_000

/** The rows, plain first. */
export const FEATURE_ROWS: readonly FeatureRow[] = [
  { id: PLAIN_ROW, label: 'plain', sets: "`post('tick', i)`: no key, no priority", options: {}, post: 'nothing' },
  { id: 'feature-key-int', label: 'keyed (integer)', sets: '`{ key: k }`, k in 0–9,999', options: {}, post: 'int-key' },
  { id: 'feature-key-str', label: 'keyed (string)', sets: "`{ key: 'order-k' }`", options: {}, post: 'string-key' },
  {
    id: 'feature-idempotent',
    label: 'idempotency key',
    sets: "`{ idempotencyKey: 'msg-i' }`, distinct per post (default in-memory ledger)",
    options: {},
    post: 'idempotency-key',
    check: checkLedger,
  },
  {
    id: 'feature-timeout',
    label: 'timeoutMs',
    sets: `loop \`timeoutMs: ${TIMEOUT_MS}\` (a watchdog guard per attempt)`,
    options: { timeoutMs: TIMEOUT_MS },
    post: 'nothing',
  },
  {
    id: 'feature-retry',
    label: 'retries configured',
    sets: `loop \`retry: { maxAttempts: ${RETRY.maxAttempts} }\` (handler never fails)`,
    options: { retry: RETRY },
    post: 'nothing',
  },
  {
    id: 'feature-backpressure',
    label: 'backpressure',
    sets: 'loop `backpressure: true` (default watermarks 60 / 80 / 95 %)',
    options: { backpressure: true },
    post: 'nothing',
    check: checkPressure,
  },
  {
    id: 'feature-traces-all',
    label: "traces 'all'",
    sets: "loop `traces: 'all'` (a lifecycle trace per message)",
    options: { traces: 'all' },
    post: 'nothing',
    check: checkTraced,
  },
  {
    id: ALL_ON_ROW,
    label: 'features on',
    sets: `\`timeoutMs: ${TIMEOUT_MS}\` + \`retry: { maxAttempts: ${RETRY.maxAttempts} }\` + an idempotency key per post + \`backpressure: true\` (+ the default logger)`,
    options: { timeoutMs: TIMEOUT_MS, retry: RETRY, backpressure: true },
    post: 'idempotency-key',
    check: async (loop, what, workload) => {
      await checkPressure(loop, what, workload)
      await checkLedger(loop, what, workload)
    },
  },
]

/** The posting loop of a shape: one function literal per shape, so each call site sees one options shape. */
function poster(loop: Loop<BenchMessages>, shape: PostShape, workload: Workload): (from: number, to: number) => void {
  switch (shape) {
    case 'nothing':
      return (from, to) => {
        for (let i = from; i < to; i++) loop.post('tick', i)
      }
    case 'int-key': {
      const keys = workload.keys
      return (from, to) => {
        for (let i = from; i < to; i++) loop.post('tick', i, { key: keys[i] as number })
      }
    }
    case 'string-key': {
      const keys = stringKeys(workload)
      return (from, to) => {
        for (let i = from; i < to; i++) loop.post('tick', i, { key: keys[i] as string })
      }
    }
    case 'idempotency-key': {
      const ids = idempotencyKeys(workload)
      return (from, to) => {
        for (let i = from; i < to; i++) loop.post('tick', i, { idempotencyKey: ids[i] as string })
      }
    }
  }
}

/** A row as a benchmark subject (timed by `timeRun`, checked at rest and by the row's own check). */
export function featureSubject(row: FeatureRow): Subject {
  const what = `feature row \`${row.label}\``
  return {
    id: row.id,
    label: `Flowing, ${row.label}`,
    memory: false,
    open(workload: Workload, { paused }): Session {
      const options: LoopOptions = { ...row.options, capacity: 2 * workload.n, workers: 8, autoStart: !paused }
      const loop = createLoop<BenchMessages>(options)
      let processed = 0
      loop.on('tick', async () => {
        processed++
      })
      return {
        postRange: poster(loop, row.post, workload),
        start: () => void loop.start(),
        idle: () => loop.drain(),
        async close(posted): Promise<SessionReport> {
          const { counters } = loop.metrics()
          checkLoopAtRest(what, loop, posted)
          expectEqual(`${what}: metrics.counters.retried`, counters.retried, 0)
          expectEqual(`${what}: metrics.counters.duplicates`, counters.duplicates, 0)
          const handled = processed
          await row.check?.(loop, what, workload)
          await loop.stop()
          return { processed: handled }
        },
      }
    },
  }
}

// The ledger was on: a re-post of the last message's key is refused as a duplicate.
async function checkLedger(loop: Loop<BenchMessages>, what: string, workload: Workload): Promise<void> {
  const key = `msg-${workload.n - 1}`
  const again = loop.tryPost('tick', -1, { idempotencyKey: key })
  expectEqual(`${what}: tryPost of the finished key ${key}`, again.status, 'duplicate')
}

// Backpressure was on and admitted every post in the normal level (fill ≤ 50 %).
async function checkPressure(loop: Loop<BenchMessages>, what: string, workload: Workload): Promise<void> {
  const stats = loop.metrics().backpressure
  if (stats === undefined) throw new BenchError(`${what}: metrics().backpressure is undefined: backpressure was off`)
  expectEqual(`${what}: backpressure admitted at level normal`, stats.levels.normal.admitted, workload.n)
  expectEqual(`${what}: backpressure transitions`, stats.transitions, 0)
}

// Traces were on for successes too: a message that succeeded has a trace (with 'failures' it has none).
async function checkTraced(loop: Loop<BenchMessages>, what: string): Promise<void> {
  const m = loop.post('tick', -1)
  await loop.drain()
  if (loop.trace(m.id) === undefined) throw new BenchError(`${what}: no trace of a message that succeeded`)
}
