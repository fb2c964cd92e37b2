/**
 * An enqueued message as the journal row a loop reads: every argument checked first — the type, the
 * payload's JSON, each option — and the record checked as a snapshot a loop can restore, so nothing a
 * loop would refuse at takeover is ever written (and nothing is sent to the server before that).
 *
 * @module
 */
import { randomUUID } from 'node:crypto'
import {
  checkHeaders,
  checkSnapshot,
  InvalidArgumentError,
  type JournalRecord,
  MAX_PRIORITY,
  type MessageHeaders,
  type MessageKey,
  Priority,
  type PriorityLevel,
  type RetryOptions,
  SNAPSHOT_FORMAT,
  SNAPSHOT_VERSION,
  SnapshotError,
  type SnapshotMessage,
} from '@flowing/core'
import { ArgumentError, argumentChecks } from '@flowing/errors'
import { keyColumn } from './batch.js'

/**
 * Options of one enqueue: those of a post that a journal row carries, and a delay.
 *
 * @group Enqueue
 */
export interface EnqueueOptions {
  /** Partition key: the loop runs the messages of one key one at a time, in enqueue order. */
  readonly key?: MessageKey | undefined
  /**
   * Urgency, an integer from 0 (most urgent) to 9.
   * @defaultValue `Priority.normal` (5) — not the loop's `defaultPriority`, which the enqueuer cannot see
   */
  readonly priority?: PriorityLevel | undefined
  /** Runs it no sooner than this many ms after the enqueue (a finite number ≥ 0), by the wall clock. */
  readonly delayMs?: number | undefined
  /**
   * Idempotency key: refused with `DuplicateMessageError` while a message of the journal with this key
   * is in flight, or finished within the ledger's TTL — checked by the database, across processes.
   */
  readonly idempotencyKey?: string | undefined
  /** Retry policy for this message, over its type's and the loop's. */
  readonly retry?: RetryOptions | undefined
  /** Handler deadline for this message (ms, > 0 or `Infinity`). */
  readonly handlerTimeoutMs?: number | undefined
  /** Key group (the loop's `groups` option): a non-empty string of at most 256 characters. */
  readonly group?: string | undefined
  /** Headers of the message. */
  readonly headers?: MessageHeaders | undefined
}

/** An enqueue, checked: the row to write. */
export interface EnqueueRow {
  /** The message's id in the journal (a loop that takes it gives it an id of its own). */
  readonly id: string
  /** The journal record, as JSON. */
  readonly body: string
  /** The idempotency key as given, and in its `keys.key` form, if there is one. */
  readonly idempotencyKey: { readonly given: string; readonly column: string } | undefined
}

const check = argumentChecks(InvalidArgumentError)

const KNOWN = [
  'key',
  'priority',
  'delayMs',
  'idempotencyKey',
  'retry',
  'handlerTimeoutMs',
  'group',
  'headers',
] as const satisfies readonly (keyof EnqueueOptions)[]

/**
 * Checks one enqueue and makes its row.
 *
 * @param types - the message types the journal's loops handle
 * @param nowEpochMs - the wall clock now, for a delay's due time
 * @throws InvalidArgumentError naming the first bad argument: `type` (with the nearest known type),
 *   `payload` (not JSON-serializable), `options.<name>` (an unknown one with the nearest known name)
 */
export function enqueueRow(
  types: readonly string[],
  type: unknown,
  payload: unknown,
  options: unknown,
  nowEpochMs: number,
): EnqueueRow {
  const t = check.oneOf('type', type, types, {
    rule: `one of the enqueuer's types (${types.join(', ')})`,
    suggest: true,
  })
  const payloadJson = payloadText(payload)
  const o = readOptions(options)
  const id = `enqueued:${randomUUID()}`
  const record = recordOf(id, t, payloadJson, o, nowEpochMs)
  checkRestorable(record, nowEpochMs)
  const given = o.idempotencyKey
  return {
    id,
    body: JSON.stringify(record),
    idempotencyKey: given === undefined ? undefined : { given, column: keyColumn(given) },
  }
}

function payloadText(payload: unknown): string | undefined {
  let text: string | undefined
  try {
    text = JSON.stringify(payload)
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error)
    throw new InvalidArgumentError('payload', `JSON-serializable (it is written as JSON): ${why}`, payload)
  }
  if (text === undefined && payload !== undefined) {
    throw new InvalidArgumentError('payload', 'JSON-serializable (it is written as JSON)', payload)
  }
  return text
}

// Each option read once (a getter runs here only), unknown names refused, every value checked.
function readOptions(options: unknown): EnqueueOptions {
  if (options === undefined) return {}
  const o: Partial<Record<(typeof KNOWN)[number], unknown>> = check.snapshot('options', options)
  check.knownKeys('options', o, KNOWN)
  const { key, priority, delayMs, idempotencyKey, handlerTimeoutMs, group, headers } = o
  if (key !== undefined && typeof key !== 'string' && !(typeof key === 'number' && Number.isFinite(key))) {
    throw new InvalidArgumentError('options.key', 'a string or a finite number', key)
  }
  if (priority !== undefined) check.integer('options.priority', priority, { min: 0, max: MAX_PRIORITY })
  if (delayMs !== undefined) check.number('options.delayMs', delayMs, { min: 0 })
  if (idempotencyKey !== undefined && !(typeof idempotencyKey === 'string' && idempotencyKey !== '')) {
    throw new InvalidArgumentError('options.idempotencyKey', 'a non-empty string', idempotencyKey)
  }
  if (handlerTimeoutMs !== undefined && !(typeof handlerTimeoutMs === 'number' && handlerTimeoutMs > 0)) {
    throw new InvalidArgumentError('options.handlerTimeoutMs', 'a positive number of ms or Infinity', handlerTimeoutMs)
  }
  if (group !== undefined && !(typeof group === 'string' && group.length > 0 && group.length <= 256)) {
    throw new InvalidArgumentError('options.group', 'a non-empty string of at most 256 characters', group)
  }
  if (headers !== undefined) checkHeaders('options.headers', headers)
  return o as EnqueueOptions
}

function recordOf(
  id: string,
  type: string,
  payloadJson: string | undefined,
  o: EnqueueOptions,
  now: number,
): JournalRecord {
  const delayed = o.delayMs !== undefined && o.delayMs > 0
  const r: { -readonly [K in keyof JournalRecord]?: JournalRecord[K] } = {
    id,
    type,
    priority: o.priority ?? Priority.normal,
    traceId: id,
    hops: 0,
    state: delayed ? 'delayed' : 'queued',
    attempts: [],
  }
  if (payloadJson !== undefined) r.payloadJson = payloadJson
  if (delayed) r.dueAtEpochMs = now + (o.delayMs as number)
  for (const name of ['key', 'idempotencyKey', 'retry', 'handlerTimeoutMs', 'group', 'headers'] as const) {
    if (o[name] !== undefined) Object.assign(r, { [name]: o[name] })
  }
  return r as JournalRecord
}

// The record as the snapshot message a loop's takeover makes of it: what the loop would refuse (a
// retry policy that breaks its rules, say) is refused here, named after the option.
function checkRestorable(record: JournalRecord, now: number): void {
  const { payloadJson: _, dueAtEpochMs, ...fields } = record
  const message: SnapshotMessage = { ...fields, payload: undefined }
  if (dueAtEpochMs !== undefined) Object.assign(message, { dueInMs: dueAtEpochMs - now })
  try {
    checkSnapshot({
      format: SNAPSHOT_FORMAT,
      version: SNAPSHOT_VERSION,
      takenAt: now,
      drained: false,
      messages: [message],
    })
  } catch (error) {
    throw asOptionError(error, record)
  }
}

// `messages[0].retry.maxAttempts` is `options.retry.maxAttempts` here.
function asOptionError(error: unknown, record: JournalRecord): Error {
  if (!(error instanceof SnapshotError)) return error instanceof Error ? error : new Error(String(error))
  const rename = (path: string) => path.replace(/^messages\[0\]\.?/, 'options.')
  const cause = error.cause
  if (cause instanceof ArgumentError) {
    const hint = cause.hint === undefined ? undefined : { hint: cause.hint }
    return new InvalidArgumentError(rename(cause.argument), cause.rule, cause.value, hint)
  }
  return new InvalidArgumentError(rename(error.path), `what a loop can restore (${error.message})`, record)
}
