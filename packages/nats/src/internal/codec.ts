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

/** The headers and body of a message. */
export function encode(w: Wire): { headers: MsgHdrs; body: Uint8Array } {
  const h = natsHeaders()
  h.set(H.id, w.id)
  h.set(H.type, w.type)
  if (w.key !== undefined) h.set(H.key, JSON.stringify(w.key))
  h.set(H.priority, String(w.priority))
  h.set(H.trace, w.traceId)
  h.set(H.hops, String(w.hops))
  h.set(H.postedAt, String(w.postedAtEpochMs))
  if (w.idempotencyKey !== undefined) h.set(H.idempotencyKey, w.idempotencyKey)
  if (w.retry !== undefined) h.set(H.retry, JSON.stringify(w.retry))
  if (w.handlerTimeoutMs !== undefined) h.set(H.timeout, String(w.handlerTimeoutMs))
  if (w.dueAtEpochMs !== undefined) h.set(H.due, String(w.dueAtEpochMs))
  for (const [name, value] of Object.entries(w.headers)) h.set(`${HEADER_PREFIX}${name}`, value)
  const body = w.payload === undefined ? new Uint8Array(0) : encoder.encode(JSON.stringify(w.payload))
  return { headers: h, body }
}

/** Why a NATS message is not a Flowing message. */
export class Undecodable extends Error {}

/**
 * The message a NATS message carries; throws {@link Undecodable} for one that is not Flowing's.
 * @param clock - dates a message without a posted-at header (its wall-clock time)
 */
export function decode(headers: MsgHdrs | undefined, body: Uint8Array, clock: Clock): Wire {
  const get = (name: string): string | undefined => {
    const v = headers?.get(name)
    return v === undefined || v === '' ? undefined : v
  }
  const id = get(H.id)
  const type = get(H.type)
  if (id === undefined || type === undefined) throw new Undecodable(`no ${id === undefined ? H.id : H.type} header`)
  const key = get(H.key)
  const retry = get(H.retry)
  return {
    id,
    type,
    payload: body.length === 0 ? undefined : json(decoder.decode(body), 'the body'),
    key: key === undefined ? undefined : (json(key, H.key) as MessageKey),
    priority: integer(get(H.priority), H.priority, 5) as PriorityLevel,
    traceId: get(H.trace) ?? id,
    hops: integer(get(H.hops), H.hops, 0),
    idempotencyKey: get(H.idempotencyKey),
    retry: retry === undefined ? undefined : (json(retry, H.retry) as RetryOptions),
    handlerTimeoutMs: optionalNumber(get(H.timeout), H.timeout),
    headers: messageHeaders(headers),
    postedAtEpochMs: optionalNumber(get(H.postedAt), H.postedAt) ?? wallNow(clock),
    dueAtEpochMs: optionalNumber(get(H.due), H.due),
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

// The message headers among a NATS message's headers (`Flowing-H-<name>`), or the shared empty map.
function messageHeaders(headers: MsgHdrs | undefined): MessageHeaders {
  let found: Record<string, string> | undefined
  for (const name of headers?.keys() ?? []) {
    if (!name.startsWith(HEADER_PREFIX)) continue
    found ??= {}
    found[name.slice(HEADER_PREFIX.length)] = headers?.get(name) ?? ''
  }
  return found === undefined ? NO_HEADERS : Object.freeze(found)
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
