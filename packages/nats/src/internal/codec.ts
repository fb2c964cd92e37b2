/**
 * How a Flowing message travels in a NATS message — one JSON object in the body, its fields and its
 * payload (readable as it is with the `nats` CLI) — and back.
 *
 * @module
 */
import {
  type Clock,
  type HeaderStamper,
  type Message,
  type MessageHeaders,
  type MessageKey,
  type MessageMap,
  type MessageType,
  mergeHeaders,
  NO_HEADERS,
  type PostOptions,
  type PriorityLevel,
  type RetryOptions,
  type SnapshotMessage,
  stampHeaders,
  wallNow,
} from '@flowing/core'
import type { MsgHdrs } from '@nats-io/transport-node'
import { decodeHeaders } from './legacy-headers.js'
import { json, Undecodable, type Wire } from './wire.js'

export { Undecodable, type Wire } from './wire.js'

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** The envelope's format mark and version: `{"flowing.wire":1, …}`. */
export const WIRE_MARK = 'flowing.wire'

/**
 * The body of a message: one JSON object with its fields and its payload. A field at its default
 * (priority 5, the trace its own id, no hops, no headers) is left out. Everything travels in the body,
 * readable as it is with the `nats` CLI, so a delivery is read by one `JSON.parse` and its NATS headers
 * (the client parses them on first use) are never read.
 */
export function encode(w: Wire): Uint8Array {
  const e: Record<string, unknown> = { [WIRE_MARK]: 1, id: w.id, type: w.type }
  if (w.key !== undefined) e['key'] = w.key
  if (w.priority !== 5) e['priority'] = w.priority
  if (w.traceId !== w.id) e['traceId'] = w.traceId
  if (w.hops !== 0) e['hops'] = w.hops
  e['postedAtEpochMs'] = w.postedAtEpochMs
  if (w.idempotencyKey !== undefined) e['idempotencyKey'] = w.idempotencyKey
  if (w.retry !== undefined) e['retry'] = w.retry
  // JSON has no Infinity (no deadline): it travels as the string.
  if (w.handlerTimeoutMs !== undefined)
    e['handlerTimeoutMs'] = Number.isFinite(w.handlerTimeoutMs) ? w.handlerTimeoutMs : 'Infinity'
  if (w.dueAtEpochMs !== undefined) e['dueAtEpochMs'] = w.dueAtEpochMs
  if (Object.keys(w.headers).length > 0) e['headers'] = w.headers
  if (w.payload !== undefined) e['payload'] = w.payload
  return encoder.encode(JSON.stringify(e))
}

/** What decoding reads of a NATS message: its body, and its headers only for an earlier version's. */
export interface Encoded {
  readonly data: Uint8Array
  readonly headers?: MsgHdrs | undefined
}

/**
 * The message a NATS message carries; throws {@link Undecodable} for one that is not Flowing's.
 * A message an earlier version stored (its fields in `Flowing-*` headers) is read too.
 * @param clock - dates an earlier version's message without a posted-at header (its wall-clock time)
 */
export function decode(m: Encoded, clock: Clock): Wire {
  const text = decoder.decode(m.data)
  const e = text.startsWith(`{"${WIRE_MARK}":1,`) ? (json(text, 'the body') as Record<string, unknown>) : undefined
  if (e === undefined) return decodeHeaders(m.headers, text, clock)
  return {
    id: nonEmpty(e['id'], 'id'),
    type: nonEmpty(e['type'], 'type'),
    payload: e['payload'],
    key: messageKey(e['key']),
    priority: integer(e['priority'], 'priority', 5) as PriorityLevel,
    traceId: e['traceId'] === undefined ? (e['id'] as string) : nonEmpty(e['traceId'], 'traceId'),
    hops: integer(e['hops'], 'hops', 0),
    idempotencyKey: e['idempotencyKey'] === undefined ? undefined : nonEmpty(e['idempotencyKey'], 'idempotencyKey'),
    retry: object(e['retry'], 'retry') as RetryOptions | undefined,
    handlerTimeoutMs:
      e['handlerTimeoutMs'] === 'Infinity'
        ? Number.POSITIVE_INFINITY
        : finite(e['handlerTimeoutMs'], 'handlerTimeoutMs'),
    headers: headersOf(e['headers']),
    postedAtEpochMs: finite(e['postedAtEpochMs'], 'postedAtEpochMs') ?? wallNow(clock),
    dueAtEpochMs: finite(e['dueAtEpochMs'], 'dueAtEpochMs'),
  }
}

function nonEmpty(v: unknown, what: string): string {
  if (typeof v !== 'string' || v === '') throw new Undecodable(`${what} is not a non-empty string`)
  return v
}

function messageKey(v: unknown): MessageKey | undefined {
  if (v === undefined || typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v))) return v
  throw new Undecodable('key is not a string or a number')
}

function integer(v: unknown, what: string, fallback: number): number {
  if (v === undefined) return fallback
  if (!Number.isInteger(v)) throw new Undecodable(`${what} is not an integer`)
  return v as number
}

function finite(v: unknown, what: string): number | undefined {
  if (v === undefined || (typeof v === 'number' && Number.isFinite(v))) return v
  throw new Undecodable(`${what} is not a number`)
}

function object(v: unknown, what: string): object | undefined {
  if (v === undefined || (typeof v === 'object' && v !== null && !Array.isArray(v))) return v
  throw new Undecodable(`${what} is not an object`)
}

function headersOf(v: unknown): MessageHeaders {
  if (v === undefined) return NO_HEADERS
  const h = object(v, 'headers') as Record<string, unknown>
  for (const value of Object.values(h)) if (typeof value !== 'string') throw new Undecodable('a header is not a string')
  return Object.freeze(h as Record<string, string>)
}

/** The message as the local loop re-admits it (`loop.readmit`). */
export function toSnapshotMessage(w: Wire, checkpoint: unknown, waitMs?: number): SnapshotMessage {
  return {
    id: w.id,
    type: w.type,
    payload: w.payload,
    ...(w.key === undefined ? {} : { key: w.key }),
    priority: w.priority,
    traceId: w.traceId,
    hops: w.hops,
    state: waitMs === undefined ? 'queued' : 'retry-scheduled',
    ...(waitMs === undefined ? {} : { dueInMs: waitMs }),
    attempts: [],
    ...(w.idempotencyKey === undefined ? {} : { idempotencyKey: w.idempotencyKey }),
    ...(checkpoint === undefined ? {} : { checkpoint }),
    ...(w.retry === undefined ? {} : { retry: w.retry }),
    ...(w.handlerTimeoutMs === undefined ? {} : { handlerTimeoutMs: w.handlerTimeoutMs }),
    ...(w.headers === NO_HEADERS ? {} : { headers: w.headers }),
  }
}

/**
 * What a post or a follow-up (of `parent`) publishes: its options, the parent's trace and one more
 * hop, the headers merged (the post's over the parent's) and stamped.
 */
export function wireOf(
  id: string,
  type: string,
  payload: unknown,
  o: PostOptions | undefined,
  parent: Pick<Message, 'traceId' | 'hops' | 'headers'> | undefined,
  stampers: readonly HeaderStamper[],
  clock: Clock,
): Wire {
  return {
    id,
    type,
    payload,
    key: o?.key,
    priority: (o?.priority ?? 5) as PriorityLevel,
    traceId: parent?.traceId ?? id,
    hops: parent === undefined ? 0 : parent.hops + 1,
    idempotencyKey: o?.idempotencyKey,
    retry: o?.retry,
    handlerTimeoutMs: o?.handlerTimeoutMs,
    headers: stampHeaders(stampers, type, mergeHeaders(parent?.headers ?? NO_HEADERS, o?.headers ?? NO_HEADERS)),
    postedAtEpochMs: wallNow(clock),
    dueAtEpochMs: undefined,
  }
}

/** The message a post returns (its id is the distributed one; `postedAt` on this process's clock). */
export function toMessage<M extends MessageMap, T extends MessageType<M>>(w: Wire, clock: Clock): Message<M, T> {
  const message: Message<Record<string, unknown>, string> = {
    id: w.id,
    type: w.type,
    payload: w.payload,
    key: w.key,
    priority: w.priority,
    routeKey: undefined,
    postedAt: clock.now(),
    seq: 0,
    traceId: w.traceId,
    hops: w.hops,
    headers: w.headers,
  }
  return message as unknown as Message<M, T>
}
