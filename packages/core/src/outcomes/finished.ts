/**
 * How a message ended, in one summary: the `finished` event's second argument and the fields of the
 * per-message log line (the `messageLog` option). Built only when someone listens or logs.
 *
 * @module
 */
import type { ErrorInfo } from '../contracts/failures.js'
import type { FinishedSummary, MessageLogLine, Outcome } from '../contracts/outcomes.js'
import type { Trace } from '../failure/trace-record.js'
import type { Envelope } from '../internal/envelope.js'

/** What an outcome knows of its message's last attempt, if one just ended. */
export interface LastAttempt {
  readonly attempt: number
  readonly startedAt: number
  readonly durationMs: number
}

/**
 * The summary of `m`, ending now. Read before its trace retires (the trace keeps the first entry and
 * earlier attempts of a message that failed or was held).
 */
export function summarize(
  outcome: Outcome,
  m: Envelope,
  trace: Trace | undefined,
  now: number,
  last: LastAttempt | undefined,
  reason?: string,
  error?: ErrorInfo,
): FinishedSummary {
  const previous = trace?.lastAttempt
  const summary: { -readonly [K in keyof FinishedSummary]: FinishedSummary[K] } = {
    outcome,
    attempts: last?.attempt ?? trace?.attemptCount ?? 0,
    lifecycleMs: now - firstEntry(m, trace),
    waitMs: last === undefined ? undefined : last.startedAt - m.postedAt,
    durationMs: last?.durationMs ?? previous?.durationMs,
  }
  if (reason !== undefined) summary.reason = reason
  if (error !== undefined) summary.error = error
  return summary
}

/** The log line of a finished message. */
export function logLine(m: Envelope, summary: FinishedSummary): MessageLogLine {
  const line: Record<string, unknown> = { id: m.id, type: m.type }
  if (m.key !== undefined) line['key'] = m.key
  if (m.routeKey !== undefined) line['routeKey'] = m.routeKey
  line['traceId'] = m.traceId
  return Object.assign(line, summary) as unknown as MessageLogLine
}

// When `m` first entered the queue: its trace's first `queued` step, else its (only) entry.
function firstEntry(m: Envelope, trace: Trace | undefined): number {
  return trace?.firstQueuedAt ?? m.postedAt
}
