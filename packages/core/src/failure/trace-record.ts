/**
 * One message's lifecycle trace, as the loop keeps it: small, since `traces: 'all'` makes one per
 * message — its steps packed as numbers, its attempts made into records only when read.
 *
 * @module
 */

import type { AttemptRecord } from '../contracts/failures.js'
import type { MessageKey } from '../contracts/message.js'
import { MAX_TRANSITIONS, type MessageState, type MessageTrace, type Transition } from '../contracts/traces.js'
import type { Envelope } from '../internal/envelope.js'

/** Every message state, in the order of their codes in a trace's packed steps (a code is its index). */
export const STATES: readonly MessageState[] = [
  'delayed',
  'queued',
  'held',
  'rate-limited',
  'running',
  'succeeded',
  'failed',
  'timed-out',
  'retry-scheduled',
  'dead-lettered',
  'request-failed',
  'dropped',
  'cancelled',
  'committed',
  'snapshotted',
]
const CODES = new Map<MessageState, number>(STATES.map((state, code) => [state, code]))
// The attempt field of a step that belongs to none (attempts are numbered from 1).
const NO_ATTEMPT = -1

/**
 * A live trace (mutable; copied out by {@link Traces.find}). Kept small, as `traces: 'all'` makes one
 * per message: its steps are packed three numbers apiece (state code, time, attempt) in one array of
 * doubles, their rare details beside them; a succeeded attempt is four fields — no object is made per
 * step or per attempt until someone reads them.
 */
export class Trace {
  state: MessageState = 'queued'
  truncated = 0
  // The last back-off, for decorrelated jitter.
  lastDelayMs = 0
  // Retired: its message reached a final state (it stays readable until `keep` newer ones push it out).
  done = false
  readonly #m: Envelope
  // The steps' numbers; the first array has room for the three steps of a message that succeeds at
  // once (queued, running, succeeded): it grows only past them.
  #steps: number[] | undefined = undefined
  #length = 0
  #details: (string | undefined)[] | undefined = undefined
  // Attempts that did not succeed (and restored ones), as records.
  #records: AttemptRecord[] | undefined = undefined
  // The succeeded attempt (always the last), when there is one: its number (0: none), start, wall-clock
  // start and duration.
  #okAttempt = 0
  #okStartedAt = 0
  #okEpochMs = 0
  #okDurationMs = 0

  constructor(m: Envelope) {
    this.#m = m
  }

  /** Its message's sequence number. */
  get seq(): number {
    return this.#m.seq
  }

  /** Its message's key. */
  get key(): MessageKey | undefined {
    return this.#m.key
  }

  /** The trace id its message shares with its follow-ups. */
  get traceId(): string {
    return this.#m.traceId
  }

  /** Appends a transition. */
  note(state: MessageState, at: number, attempt?: number, detail?: string): void {
    this.state = state
    const i = this.#length
    if (i >= 3 * MAX_TRANSITIONS) {
      this.truncated++
      return
    }
    const code = CODES.get(state) as number
    const steps = this.#steps
    if (steps === undefined) this.#steps = [code, at, attempt ?? NO_ATTEMPT, 0, 0, 0, 0, 0, 0]
    else if (i < steps.length) {
      steps[i] = code
      steps[i + 1] = at
      steps[i + 2] = attempt ?? NO_ATTEMPT
    } else steps.push(code, at, attempt ?? NO_ATTEMPT)
    this.#length = i + 3
    if (detail === undefined) return
    this.#details ??= []
    this.#details[i / 3] = detail
  }

  /** When its last transition happened (undefined before the first). */
  get lastAt(): number | undefined {
    return this.#length === 0 ? undefined : this.#steps?.[this.#length - 2]
  }

  /** When it first entered the queue (its first `queued` step), if it kept one. */
  get firstQueuedAt(): number | undefined {
    const steps = this.#steps
    const queued = CODES.get('queued')
    if (steps !== undefined) for (let i = 0; i < this.#length; i += 3) if (steps[i] === queued) return steps[i + 1]
    return undefined
  }

  /** Every transition kept, oldest first (made on each read). */
  get transitions(): Transition[] {
    const steps = this.#steps ?? []
    const out: Transition[] = []
    for (let i = 0; i < this.#length; i += 3) {
      const t: { state: MessageState; at: number; attempt?: number; detail?: string } = {
        state: STATES[steps[i] as number] as MessageState,
        at: steps[i + 1] as number,
      }
      const attempt = steps[i + 2] as number
      if (attempt !== NO_ATTEMPT) t.attempt = attempt
      const detail = this.#details?.[i / 3]
      if (detail !== undefined) t.detail = detail
      out.push(t)
    }
    return out
  }

  /** Finished attempts, oldest first (made on each read). */
  get attempts(): AttemptRecord[] {
    const out = this.#records === undefined ? [] : [...this.#records]
    const ok = this.#succeeded()
    if (ok !== undefined) out.push(ok)
    return out
  }

  /** Finished attempts. */
  get attemptCount(): number {
    return (this.#records?.length ?? 0) + (this.#okAttempt === 0 ? 0 : 1)
  }

  /** The last finished attempt, if any. */
  get lastAttempt(): AttemptRecord | undefined {
    return this.#succeeded() ?? this.#records?.[this.#records.length - 1]
  }

  /** Records a finished attempt that did not succeed (or one restored). */
  addAttempt(record: AttemptRecord): void {
    this.#records ??= []
    this.#records.push(record)
  }

  /** Records the attempt that succeeded. */
  succeeded(attempt: number, startedAt: number, startedAtEpochMs: number, durationMs: number): void {
    this.#okAttempt = attempt
    this.#okStartedAt = startedAt
    this.#okEpochMs = startedAtEpochMs
    this.#okDurationMs = durationMs
  }

  #succeeded(): AttemptRecord | undefined {
    if (this.#okAttempt === 0) return undefined
    return {
      attempt: this.#okAttempt,
      startedAt: this.#okStartedAt,
      startedAtEpochMs: this.#okEpochMs,
      durationMs: this.#okDurationMs,
      outcome: 'succeeded',
    }
  }

  /** A plain copy. */
  toJSON(): MessageTrace {
    const m = this.#m
    return {
      id: m.id,
      type: m.type,
      key: m.key,
      routeKey: m.routeKey,
      traceId: m.traceId,
      state: this.state,
      attempts: this.attempts,
      transitions: this.transitions,
      truncated: this.truncated,
    }
  }
}
