/**
 * Journal records: a live message as a {@link JournalRecord}, and what a store recovered as the
 * shutdown snapshot that `restore()` re-admits — so a crash and a planned stop recover the same way.
 *
 * @module
 */
import { wallNow } from '../clock.js'
import type { Clock } from '../contracts/clock.js'
import type { LoopSnapshot, SnapshotMessage, SnapshotState } from '../contracts/snapshot.js'
import type { JournalRecord, JournalState, StoreContents } from '../contracts/store.js'
import type { Traces } from '../failure/trace.js'
import { NO_HEADERS } from '../headers.js'
import type { LedgerSlot } from '../idempotency/ledger.js'
import type { Envelope } from '../internal/envelope.js'
import type { PostExtras } from '../internal/post-extras.js'
import type { EntryExtras } from '../shutdown/hand-back.js'
import { newSnapshot } from '../shutdown/snapshot.js'

/** Where a record's per-post fields are read. */
export interface RecordParts {
  readonly extras: PostExtras
  readonly traces: Traces
  readonly ledger: LedgerSlot
}

/** The per-post fields of a message handed back by a stop (read before its side tables go). */
export type SavedFields = EntryExtras

/** The fields of `m` a restart needs, read from the side tables. */
export function fieldsOf(parts: RecordParts, m: Envelope): SavedFields {
  const { extras, traces, ledger } = parts
  return {
    attempts: traces.of(m)?.attempts ?? [],
    idempotencyKey: ledger.current?.keyOf(m),
    checkpoint: extras.checkpointOf(m),
    retry: extras.retryOf(m),
    handlerTimeoutMs: extras.timeoutOf(m),
    group: extras.groupOf(m),
    job: extras.jobOf(m),
    schedule: extras.scheduleOf(m),
    crashes: extras.crashesOf(m),
  }
}

/**
 * The record of `m` in `state`.
 * @param dueAtEpochMs - for delayed and backing-off messages
 * @param fields - its per-post fields, when its side tables are gone already
 * @param running - whether an attempt of it runs now (a crash would interrupt it)
 */
export function recordOf(
  parts: RecordParts,
  m: Envelope,
  payloadJson: string | undefined,
  state: SnapshotState,
  dueAtEpochMs: number | undefined,
  fields: SavedFields = fieldsOf(parts, m),
  running = false,
): JournalRecord {
  const r: { -readonly [K in keyof JournalRecord]?: JournalRecord[K] } = {
    id: m.id,
    type: m.type,
    priority: m.priority,
    traceId: m.traceId,
    hops: m.hops,
    state: journalState(state),
    attempts: fields.attempts ?? [],
  }
  if (payloadJson !== undefined) r.payloadJson = payloadJson
  if (m.key !== undefined) r.key = m.key
  if (dueAtEpochMs !== undefined && r.state !== 'queued') r.dueAtEpochMs = dueAtEpochMs
  if (fields.idempotencyKey !== undefined) r.idempotencyKey = fields.idempotencyKey
  if (fields.checkpoint !== undefined) r.checkpoint = fields.checkpoint
  if (fields.retry !== undefined) r.retry = fields.retry
  if (fields.handlerTimeoutMs !== undefined) r.handlerTimeoutMs = fields.handlerTimeoutMs
  if (fields.group !== undefined) r.group = fields.group
  if (fields.job !== undefined) r.job = fields.job
  if (fields.schedule !== undefined) r.schedule = fields.schedule
  if (fields.crashes !== undefined) r.crashes = fields.crashes
  if (running) r.running = true
  if (m.origin !== undefined && m.headers !== NO_HEADERS) r.headers = m.headers
  return r as JournalRecord
}

// Held and running messages run again after a restart, like queued ones.
function journalState(state: SnapshotState): JournalState {
  return state === 'delayed' || state === 'retry-scheduled' ? state : 'queued'
}

/**
 * What a store recovered, as a snapshot taken now: delays keep their wall-clock due times (a message
 * due while the process was down is due at once), the journal's ids become the snapshot's.
 */
export function snapshotOf(contents: StoreContents, clock: Clock): LoopSnapshot {
  const now = wallNow(clock)
  const messages = contents.messages.map((r): SnapshotMessage => {
    const { payloadJson, dueAtEpochMs, running, ...rest } = r
    const m: { -readonly [K in keyof SnapshotMessage]?: SnapshotMessage[K] } = { ...rest }
    if (running === true) m.crashes = (r.crashes ?? 0) + 1 // an attempt was running when the process died
    if (payloadJson !== undefined) m.payload = JSON.parse(payloadJson)
    if (r.state !== 'queued') m.dueInMs = Math.max(0, (dueAtEpochMs ?? now) - now)
    return m as SnapshotMessage
  })
  return newSnapshot(clock, messages, false)
}
