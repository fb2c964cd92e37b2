/**
 * Reading a message an earlier version stored: its fields in `Flowing-*` NATS headers, its payload
 * alone in the body. Such messages can wait in the delayed stream across an upgrade.
 *
 * @module
 */
import { type Clock, type MessageKey, NO_HEADERS, type PriorityLevel, type RetryOptions, wallNow } from '@flowing/core'
import type { MsgHdrs } from '@nats-io/transport-node'
import { json, Undecodable, type Wire } from './wire.js'

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

/** An earlier version's message: its headers, and its body (the payload's JSON) as text. */
export function decodeHeaders(headers: MsgHdrs | undefined, body: string, clock: Clock): Wire {
  const f = fieldsOf(headers)
  const { id, type } = f
  if (id === undefined || type === undefined) throw new Undecodable(`no ${id === undefined ? H.id : H.type} header`)
  return {
    id,
    type,
    payload: body.length === 0 ? undefined : json(body, 'the body'),
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
