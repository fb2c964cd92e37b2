/**
 * The batches of the crash test, a pure function of their number, so the child that commits them and
 * the test that checks what survived agree without talking. Batch `n`:
 *
 * - journals `PER_BATCH` records `b<n>-<i>`, each tagged `checkpoint: { batch: n }`;
 * - replaces `b<n-1>-0` (state `delayed`, `checkpoint: { batch: n - 1, replacedBy: n }`);
 * - finishes batch `n-3` except every tenth record (the survivors stay for good);
 * - every fifth batch, dead-letters `d<n>` and removes `d<n-10>`; every batch, keys `k<n>` and
 *   releases `k<n-4>`.
 *
 * So the records of batch `k` are always held after batch `k`: the highest tag recovered names the
 * last batch that survived.
 */
import type { DeadLetter, JournalBatch, JournalRecord, KeyRecord } from '@flowing/core'

/** Records journaled per batch. */
export const PER_BATCH = 50

function rec(id: string, checkpoint: unknown, state: JournalRecord['state'] = 'queued'): JournalRecord {
  const payloadJson = JSON.stringify({ id, text: 'x'.repeat(64) })
  return { id, type: 'job', payloadJson, priority: 4, traceId: `t-${id}`, hops: 0, state, attempts: [], checkpoint }
}

function letter(id: string, n: number): DeadLetter {
  const error = { name: 'Error', message: 'boom', signature: 'Error: boom', errorClass: 'non-retryable' as const }
  return {
    id,
    type: 'job',
    payload: { n },
    key: undefined,
    priority: 4,
    routeKey: undefined,
    traceId: `t-${id}`,
    reason: 'non-retryable',
    errorClass: 'non-retryable',
    error,
    attempts: [],
    at: n,
    atEpochMs: 1_700_000_000_000 + n,
  }
}

function key(n: number): KeyRecord {
  return { key: `k${n}`, entry: { state: 'done', checkpoint: { batch: n } }, expiresAtEpochMs: 4_102_444_800_000 }
}

/** Batch number `n` (from 1). */
export function crashBatch(n: number): JournalBatch {
  const messages = Array.from({ length: PER_BATCH }, (_, i) => rec(`b${n}-${i}`, { batch: n }))
  if (n > 1) messages.unshift(rec(`b${n - 1}-0`, { batch: n - 1, replacedBy: n }, 'delayed'))
  const removed =
    n > 3 ? Array.from({ length: PER_BATCH }, (_, i) => `b${n - 3}-${i}`).filter((_, i) => i % 10 !== 0) : []
  const letters = n % 5 === 0 ? [letter(`d${n}`, n)] : []
  return {
    messages,
    removed,
    deadLetters: letters,
    deadLettersRemoved: n % 5 === 0 && n > 10 ? [`d${n - 10}`] : [],
    keys: [key(n)],
    keysRemoved: n > 4 ? [`k${n - 4}`] : [],
  }
}

/** The last batch whose records survived: the highest `checkpoint.batch` among the messages (0 if none). */
export function lastBatch(messages: readonly JournalRecord[]): number {
  let last = 0
  for (const m of messages) last = Math.max(last, (m.checkpoint as { batch: number }).batch)
  return last
}
