/**
 * Per-message lifecycle traces: every state a message went through and every attempt it made, readable
 * with `loop.trace(id)`.
 *
 * @module
 */

import type { AttemptRecord } from '../contracts/failures.js'
import type { MessageKey } from '../contracts/message.js'
import type { Envelope } from '../internal/envelope.js'
import { Ring } from '../internal/ring.js'

/**
 * The states of a message (docs/design/message-lifecycle.md has the diagram):
 * `delayed` → `queued` → `running` → `succeeded` | `failed` | `timed-out`;
 * a failed or timed-out attempt → `retry-scheduled` → `queued` … or → `dead-lettered` (→
 * `request-failed` instead when a `loop.request()` caller takes the error);
 * `queued` → `held` (its route's breaker is open) → `queued`; `queued` or `running` → `rate-limited` (a
 * budget is full, or the handler threw `RateLimitError`) → `queued`; `running` → `committed` (its side effect is
 * done, `ctx.commit()`) → …; `dropped` and `cancelled` end it early; `snapshotted`: handed back by a stop.
 *
 * @group Failure handling
 * @category Traces
 */
export type MessageState =
  | 'delayed'
  | 'queued'
  | 'held'
  | 'rate-limited'
  | 'running'
  | 'succeeded'
  | 'failed'
  | 'timed-out'
  | 'retry-scheduled'
  | 'dead-lettered'
  | 'request-failed'
  | 'dropped'
  | 'cancelled'
  | 'committed'
  | 'snapshotted'

/**
 * One step of a trace.
 *
 * @group Failure handling
 * @category Traces
 */
export interface Transition {
  /** The state entered. */
  readonly state: MessageState
  /** Clock time (ms). */
  readonly at: number
  /** The attempt it belongs to (running, failed, timed-out, retry-scheduled, succeeded). */
  readonly attempt?: number
  /** Extra context: the back-off, the breaker's route, the drop reason. */
  readonly detail?: string
}

/**
 * A message's trace: plain, JSON-serializable data.
 *
 * @group Failure handling
 * @category Traces
 */
export interface MessageTrace {
  /** The message id. */
  readonly id: string
  /** Its type. */
  readonly type: string
  /** Its key, if any. */
  readonly key: MessageKey | undefined
  /** Its route key, if its type has a router. */
  readonly routeKey: string | undefined
  /** The trace id it shares with its follow-ups. */
  readonly traceId: string
  /** The current (or final) state. */
  readonly state: MessageState
  /** Finished attempts, oldest first. */
  readonly attempts: readonly AttemptRecord[]
  /** Every state change, oldest first (at most {@link MAX_TRANSITIONS}; `truncated` counts the rest). */
  readonly transitions: readonly Transition[]
  /** Transitions left out past the bound (a message held and released many times). */
  readonly truncated: number
}

/**
 * Transitions kept per message.
 *
 * @group Failure handling
 * @category Traces
 */
export const MAX_TRANSITIONS = 64

// The states that end a message (a trace in one of them is retired).
function isFinal(state: MessageState): boolean {
  return (
    state === 'succeeded' ||
    state === 'dead-lettered' ||
    state === 'request-failed' ||
    state === 'dropped' ||
    state === 'cancelled' ||
    state === 'snapshotted'
  )
}

/** A live trace (mutable; copied out by {@link Traces.find}). */
export class Trace {
  state: MessageState = 'queued'
  readonly attempts: AttemptRecord[] = []
  readonly transitions: Transition[] = []
  truncated = 0
  // The last back-off, for decorrelated jitter.
  lastDelayMs = 0
  // Retired: its message reached a final state (it stays readable until `keep` newer ones push it out).
  done = false
  readonly #m: Envelope

  constructor(m: Envelope) {
    this.#m = m
  }

  /** Its message's sequence number. */
  get seq(): number {
    return this.#m.seq
  }

  /** Appends a transition. */
  note(state: MessageState, at: number, attempt?: number, detail?: string): void {
    this.state = state
    if (this.transitions.length >= MAX_TRANSITIONS) {
      this.truncated++
      return
    }
    const t: { state: MessageState; at: number; attempt?: number; detail?: string } = { state, at }
    if (attempt !== undefined) t.attempt = attempt
    if (detail !== undefined) t.detail = detail
    this.transitions.push(t)
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
      attempts: [...this.attempts],
      transitions: [...this.transitions],
      truncated: this.truncated,
    }
  }
}

/**
 * The loop's traces. With `traces: 'failures'` (the default) a message gets a trace the first time
 * something goes wrong — an attempt fails, its breaker holds it — seeded with the steps it took before
 * (queued, running), so the happy path costs one size check. With `'all'` every message is traced
 * from admission. Finished traces stay readable, the most recent `keep` of them.
 */
export class Traces {
  readonly all: boolean
  readonly #keep: number
  // Traces by sequence number (ids are `prefix:seq`): the live ones and the most recent `keep`
  // finished ones, in one map — retiring a trace moves nothing, and a lookup finds either.
  readonly #traces = new Map<number, Trace>()
  // The finished ones kept, oldest first: past `keep`, the first is forgotten (O(1)).
  readonly #finished = new Ring<Trace>()
  #live = 0

  /**
   * @param all - trace every message, not only troubled ones
   * @param keep - finished traces kept readable
   */
  constructor(all: boolean, keep: number) {
    this.all = all
    this.#keep = keep
  }

  /** Live traces. */
  get live(): number {
    return this.#live
  }

  /** The live trace of `m`, if it has one (cheap when none exists). */
  of(m: Envelope): Trace | undefined {
    if (this.#live === 0) return undefined
    const t = this.#traces.get(m.seq)
    return t === undefined || t.done ? undefined : t
  }

  /**
   * The trace of `m`, opened if needed, seeded with `queued` at its entry time.
   */
  open(m: Envelope): Trace {
    let t = this.of(m)
    if (t === undefined) {
      t = this.#start(m)
      t.note('queued', m.postedAt)
    }
    return t
  }

  /** Records a transition of `m` if it is traced (always, in `all` mode); final states retire the trace. */
  note(m: Envelope, state: MessageState, at: number, attempt?: number, detail?: string): void {
    let t = this.of(m)
    if (t === undefined) {
      if (!this.all) return
      t = this.#start(m)
    }
    t.note(state, at, attempt, detail)
    if (isFinal(state)) this.#retire(t)
  }

  /** A live or recently finished trace by sequence number. */
  find(seq: number): MessageTrace | undefined {
    return this.#traces.get(seq)?.toJSON()
  }

  #start(m: Envelope): Trace {
    const t = new Trace(m)
    this.#traces.set(m.seq, t) // (over a finished trace of the same message, if it had one)
    this.#live++
    return t
  }

  #retire(t: Trace): void {
    t.done = true
    this.#live--
    if (this.#keep === 0) {
      this.#forget(t)
      return
    }
    const finished = this.#finished
    finished.push(t)
    if (finished.length > this.#keep) this.#forget(finished.shift() as Trace)
  }

  // Drops a finished trace, unless a newer trace of its message took its place.
  #forget(t: Trace): void {
    if (this.#traces.get(t.seq) === t) this.#traces.delete(t.seq)
  }
}
