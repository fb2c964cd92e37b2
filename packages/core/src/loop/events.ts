/**
 * The loop's typed events (eventemitter3). Subscribe with `loop.events.on(name, listener)`.
 *
 * @module
 */
import type { Message, MessageMap } from '../message.js'

/** Lifecycle states: created → running ⇄ paused → draining → stopped. */
export type LoopState = 'created' | 'running' | 'paused' | 'draining' | 'stopped'

/** Why a message was dropped. */
export type DropReason = 'drop-new' | 'drop-oldest-lowest'

/**
 * Event names and listener arguments.
 *
 * @typeParam M - the message map
 */
export interface LoopEvents<M extends MessageMap = MessageMap> {
  /** A message was admitted. */
  posted: [message: Message<M>]
  /** A post was refused (the caller got the same error). */
  rejected: [type: string, error: Error]
  /** A handler started. */
  started: [message: Message<M>]
  /** A handler returned or resolved. */
  succeeded: [message: Message<M>, durationMs: number]
  /** A handler threw or rejected; the message's outcome is `failed`. */
  failed: [message: Message<M>, error: unknown]
  /** An overflow policy dropped a message. */
  dropped: [message: Message<M>, reason: DropReason]
  /** A queued message was cancelled by `stop({ drain: false })`. */
  cancelled: [message: Message<M>]
  /** Queue empty and nothing running (fired on each transition to idle). */
  idle: []
  /** The lifecycle state changed. */
  state: [state: LoopState, previous: LoopState]
}
