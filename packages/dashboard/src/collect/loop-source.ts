/**
 * What a dashboard can show: an in-process `Loop`, or a `@flowing/nats` loop (its process's local loop
 * and its partitions), told apart by shape so that this package does not depend on `@flowing/nats`.
 *
 * @module
 */
import { Loop } from '@flowing/core'
import { type Letters, localLetters, type SharedLetters, sharedLetters } from './letters.js'

// biome-ignore lint/suspicious/noExplicitAny: a loop of any message map and result map may be shown
type AnyLoop = Loop<any, any>
/** A loop as the dashboard reads it: any message type, any payload. */
export type ShownLoop = Loop<Record<string, unknown>>

/**
 * The part of a `@flowing/nats` loop a dashboard reads: its local loop and its counters.
 *
 * @group Dashboard
 */
export interface NatsLikeLoop {
  /** The process's local loop, which runs the messages of the partitions it owns. */
  // biome-ignore lint/suspicious/noExplicitAny: a loop of any message map and result map may be shown
  readonly local: Loop<any, any>
  /** The process's counters; `partitions`: how many partitions it owns now. */
  metrics(): { readonly partitions: number }
  /** The server's version. */
  readonly serverVersion?: string
  /** The dead letters every process of the loop shares. */
  readonly deadLetters?: SharedLetters
}

/**
 * A loop a dashboard shows: a `Loop` from `@flowing/core` or a `NatsLoop` from `@flowing/nats`.
 *
 * @group Dashboard
 */
// biome-ignore lint/suspicious/noExplicitAny: a loop of any message map and result map may be shown
export type DashboardLoop = Loop<any, any> | NatsLikeLoop

/** Whether `value` is something a dashboard can show. */
export function isDashboardLoop(value: unknown): value is DashboardLoop {
  try {
    if (isCoreLoop(value)) return true
    if (value === null || typeof value !== 'object') return false
    const nats = value as Partial<NatsLikeLoop>
    return isCoreLoop(nats.local) && typeof nats.metrics === 'function'
  } catch {
    return false // a getter or a Proxy trap that throws: not a loop the dashboard can read
  }
}

// A `Loop` — by its shape too, so that a second copy of `@flowing/core` in the app is recognised.
function isCoreLoop(value: unknown): value is AnyLoop {
  if (value instanceof Loop) return true
  if (value === null || typeof value !== 'object') return false
  const loop = value as Partial<AnyLoop>
  return typeof loop.metrics === 'function' && typeof loop.trace === 'function' && typeof loop.inspect === 'function'
}

/** One shown loop: its name, its local loop, and its NATS side when it has one. */
export class LoopSource {
  /** The local loop every view reads. */
  readonly loop: ShownLoop
  /** The NATS loop around it, if any. */
  readonly nats: NatsLikeLoop | undefined
  /** Its dead letters: the loop's store, or a NATS loop's shared stream. */
  readonly letters: Letters

  /**
   * @param name - the loop's name in the dashboard
   * @param shown - what the app passed
   */
  constructor(
    readonly name: string,
    shown: DashboardLoop,
  ) {
    const nats = 'local' in shown ? (shown as NatsLikeLoop) : undefined
    this.loop = nats === undefined ? (shown as AnyLoop) : nats.local
    this.nats = nats
    this.letters =
      nats?.deadLetters === undefined ? localLetters(this.loop.deadLetters) : sharedLetters(nats.deadLetters)
  }

  /** `nats` or `loop`. */
  get kind(): 'loop' | 'nats' {
    return this.nats === undefined ? 'loop' : 'nats'
  }
}
