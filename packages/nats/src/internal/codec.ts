/**
 * How a Flowing message travels in a NATS message: its payload as JSON in the body, everything else in
 * headers (so a `nats` CLI user can read them), and back.
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
import { type MsgHdrs, headers as natsHeaders } from '@nats-io/transport-node'

/** Header names. */
export const H = {
  id: 'Flowing-Id',
  type: 'Flowing-Type',
  key: 'Flowing-Key',
  priority: 'Flowing-Priority',
  trace: 'Flowing-Trace',
  hops: 'Flowing-Hops',
  idempotencyKey: 'Flowing-Idempotency-Key',
  retry: 'Flowing-Retry',
  timeout: 'Flowing-Handler-Timeout',
  due: 'Flowing-Due',
  postedAt: 'Flowing-Posted-At',
} as const

/** The prefix of the NATS header that carries a message header (`Flowing-H-<name>`). */
export const HEADER_PREFIX = 'Flowing-H-'

/** A message as it travels: what a process needs to run it. */
export interface Wire {
  /** Its distributed id (stable across deliveries; the root of a trace gives its trace id). */
  readonly id: string
  readonly type: string
  readonly payload: unknown
  readonly key: MessageKey | undefined
  readonly priority: PriorityLevel
  readonly traceId: string
  readonly hops: number
  readonly idempotencyKey: string | undefined
  readonly retry: RetryOptions | undefined
  readonly handlerTimeoutMs: number | undefined
  /** Its headers (the message's own, not the transport's). */
  readonly headers: MessageHeaders
  /** When it was published, in ms since the Unix epoch. */
  readonly postedAtEpochMs: number
  /** For a delayed message: when it is due, in ms since the Unix epoch. */
  readonly dueAtEpochMs: number | undefined
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/**
 * The headers and body of a message. A header at its default (priority 5, the trace its own id, no
 * hops) is left out: fewer headers to send, store and parse.
 */
export function encode(w: Wire): { headers: MsgHdrs; body: Uint8Array } {
  const h = natsHeaders()
  h.append(H.id, w.id)
  h.append(H.type, w.type)
  if (w.key !== undefined) h.append(H.key, JSON.stringify(w.key))
  if (w.priority !== 5) h.append(H.priority, String(w.priority))
  if (w.traceId !== w.id) h.append(H.trace, w.traceId)
  if (w.hops !== 0) h.append(H.hops, String(w.hops))
  h.append(H.postedAt, String(w.postedAtEpochMs))
  if (w.idempotencyKey !== undefined) h.append(H.idempotencyKey, w.idempotencyKey)
  if (w.retry !== undefined) h.append(H.retry, JSON.stringify(w.retry))
  if (w.handlerTimeoutMs !== undefined) h.append(H.timeout, String(w.handlerTimeoutMs))
  if (w.dueAtEpochMs !== undefined) h.append(H.due, String(w.dueAtEpochMs))
  for (const [name, value] of Object.entries(w.headers)) h.set(`${HEADER_PREFIX}${name}`, value)
  const body = w.payload === undefined ? new Uint8Array(0) : encoder.encode(JSON.stringify(w.payload))
  return { headers: h, body }
}

/** Why a NATS message is not a Flowing message. */
export class Undecodable extends Error {}

// The Flowing headers of one NATS message, read in one pass (the client's `get` scans them all).
type Fields = { -readonly [K in keyof typeof H]?: string } & { headers?: Record<string, string> }
const FIELD_OF = new Map<string, keyof typeof H>(
  Object.entries(H).map(([field, name]) => [name, field as keyof typeof H]),
)

function fieldsOf(headers: MsgHdrs | undefined): Fields {
  const f: Fields = {}
  if (headers === undefined) return f
  for (const [name, values] of headers as unknown as Iterable<[string, string[]]>) {
    const value = values[0] ?? ''
    const field = FIELD_OF.get(name)
    if (field !== undefined) {
      if (value !== '') f[field] ??= value
    } else if (name.startsWith(HEADER_PREFIX)) {
      f.headers ??= {}
      f.headers[name.slice(HEADER_PREFIX.length)] ??= value
    }
  }
  return f
}

/**
 * The message a NATS message carries; throws {@link Undecodable} for one that is not Flowing's.
 * @param clock - dates a message without a posted-at header (its wall-clock time)
 */
export function decode(headers: MsgHdrs | undefined, body: Uint8Array, clock: Clock): Wire {
  const f = fieldsOf(headers)
  const { id, type } = f
  if (id === undefined || type === undefined) throw new Undecodable(`no ${id === undefined ? H.id : H.type} header`)
  return {
    id,
    type,
    payload: body.length === 0 ? undefined : json(decoder.decode(body), 'the body'),
    key: f.key === undefined ? undefined : (json(f.key, H.key) as MessageKey),
    priority: integer(f.priority, H.priority, 5) as PriorityLevel,
    traceId: f.trace ?? id,
    hops: integer(f.hops, H.hops, 0),
    idempotencyKey: f.idempotencyKey,
    retry: f.retry === undefined ? undefined : (json(f.retry, H.retry) as RetryOptions),
    handlerTimeoutMs: optionalNumber(f.timeout, H.timeout),
    headers: f.headers === undefined ? NO_HEADERS : Object.freeze(f.headers),
    postedAtEpochMs: optionalNumber(f.postedAt, H.postedAt) ?? wallNow(clock),
    dueAtEpochMs: optionalNumber(f.due, H.due),
  }
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

function json(text: string, what: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    throw new Undecodable(`${what} is not JSON`)
  }
}

function integer(text: string | undefined, what: string, fallback: number): number {
  const n = optionalNumber(text, what) ?? fallback
  if (!Number.isInteger(n)) throw new Undecodable(`${what} is not an integer`)
  return n
}

function optionalNumber(text: string | undefined, what: string): number | undefined {
  if (text === undefined) return undefined
  const n = Number(text)
  if (Number.isNaN(n)) throw new Undecodable(`${what} is not a number`)
  return n
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
