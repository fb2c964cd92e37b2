/**
 * A Flowing message as it travels between processes, and why a NATS message may not be one.
 *
 * @module
 */
import type { MessageHeaders, MessageKey, PriorityLevel, RetryOptions } from '@flowing/core'

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

/** Why a NATS message is not a Flowing message. */
export class Undecodable extends Error {}

/** `text` parsed, or {@link Undecodable} naming `what`. */
export function json(text: string, what: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    throw new Undecodable(`${what} is not JSON`)
  }
}
