/**
 * Per-message lifecycle traces: every state a message went through and every attempt it made, readable
 * with `loop.trace(id)`.
 *
 * @module
 */
import type { Envelope } from '../internal/envelope.js'
import type { MessageKey } from '../message.js'
import type { ErrorInfo } from './classify.js'

/**
 * The states of a message (docs/design/message-lifecycle.md has the diagram):
 * `delayed` → `queued` → `running` → `succeeded` | `failed` | `timed-out`;
 * a failed or timed-out attempt → `retry-scheduled` → `queued` … or → `dead-lettered`;
 * `queued` → `held` (its route's breaker is open) → `queued`; `running` → `committed` (its side effect is
 * done, `ctx.commit()`) → …; `dropped` and `cancelled` end it early; `snapshotted`: handed back by a stop.
 */
export type MessageState =
  | 'delayed'
  | 'queued'
  | 'held'
  | 'running'
  | 'succeeded'
  | 'failed'
  | 'timed-out'
  | 'retry-scheduled'
  | 'dead-lettered'
  | 'dropped'
  | 'cancelled'
  | 'committed'
  | 'snapshotted'

/** One step of a trace. */
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

/** One attempt: when it started, how long it ran, how it ended. */
export interface AttemptRecord {
  /** 1 for the first. */
  readonly attempt: number
  /** Clock time (ms) it started. */
  readonly startedAt: number
  /**
   * When it started, in ms since the Unix epoch (wall clock; absent in records restored from
   * snapshots written before it existed).
   */
  readonly startedAtEpochMs?: number
  /** How long it ran (ms; up to the deadline for a timeout). */
  readonly durationMs: number
  /** How it ended. */
  readonly outcome: 'succeeded' | 'failed' | 'timed-out'
  /** Why it failed. */
  readonly error?: ErrorInfo
}

/** A message's trace: plain, JSON-serializable data. */
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

/** Transitions kept per message. */
export const MAX_TRANSITIONS = 64

const FINAL: ReadonlySet<MessageState> = new Set(['succeeded', 'dead-lettered', 'dropped', 'cancelled', 'snapshotted'])

/** A live trace (mutable; copied out by {@link Traces.get}). */
export class Trace {
  state: MessageState = 'queued'
  readonly attempts: AttemptRecord[] = []
  readonly transitions: Transition[] = []
  truncated = 0
  // The last back-off, for decorrelated jitter.
  lastDelayMs = 0
  readonly #m: Envelope

  constructor(m: Envelope) {
    this.#m = m
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
  // Live traces by sequence number (ids are `prefix:seq`), and the most recent finished ones.
  readonly #live = new Map<number, Trace>()
  readonly #finished = new Map<number, Trace>()

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
    return this.#live.size
  }

  /** The live trace of `m`, if it has one (cheap when none exists). */
  of(m: Envelope): Trace | undefined {
    return this.#live.size === 0 ? undefined : this.#live.get(m.seq)
  }

  /**
   * The trace of `m`, opened if needed, seeded with `queued` at its entry time.
   */
  open(m: Envelope): Trace {
    let t = this.#live.get(m.seq)
    if (t === undefined) {
      t = new Trace(m)
      t.note('queued', m.postedAt)
      this.#live.set(m.seq, t)
    }
    return t
  }

  /** Records a transition of `m` if it is traced (always, in `all` mode); final states retire the trace. */
  note(m: Envelope, state: MessageState, at: number, attempt?: number, detail?: string): void {
    let t = this.of(m)
    if (t === undefined) {
      if (!this.all) return
      t = new Trace(m)
      this.#live.set(m.seq, t)
    }
    t.note(state, at, attempt, detail)
    if (FINAL.has(state)) this.#retire(m.seq, t)
  }

  /** A live or recently finished trace by sequence number. */
  find(seq: number): MessageTrace | undefined {
    return (this.#live.get(seq) ?? this.#finished.get(seq))?.toJSON()
  }

  #retire(seq: number, t: Trace): void {
    this.#live.delete(seq)
    if (this.#keep === 0) return
    this.#finished.set(seq, t)
    if (this.#finished.size > this.#keep) {
      const oldest = this.#finished.keys().next().value as number
      this.#finished.delete(oldest)
    }
  }
}
