/**
 * The end of a stop with a deadline: when the deadline passes (or the stop's signal aborts), every
 * unfinished message is handed back — written into the snapshot the stop resolves with — and what
 * still runs is aborted. This file holds the cut-off's timing and the snapshot being written; the loop
 * says where its messages are.
 *
 * @module
 */
import type { Clock, TimerHandle } from '../clock.js'
import { type Envelope, Where } from '../internal/envelope.js'
import {
  type LoopSnapshot,
  SNAPSHOT_FORMAT,
  SNAPSHOT_VERSION,
  type SnapshotMessage,
  type SnapshotState,
} from '../shutdown/snapshot.js'

/** What a snapshot entry carries beyond the envelope. */
export type EntryExtras = {
  readonly [K in 'attempts' | 'idempotencyKey' | 'checkpoint' | 'retry' | 'handlerTimeoutMs']:
    | SnapshotMessage[K]
    | undefined
}

/** What the hand-back asks of the loop. */
export interface HandBackHost {
  readonly clock: Clock
  /** The cut-off: hand back every unfinished message (through `add`), then abort what runs. */
  cutOff(): void
  /** What a snapshot entry of `m` carries beyond the envelope. */
  extrasOf(m: Envelope): EntryExtras
  /** `m` left the loop in the snapshot (its outcome: `snapshotted`). */
  handedBack(m: Envelope, state: SnapshotState): void
}

/** The deadline, the signal, and the snapshot being written. */
export class HandBack {
  /** A stop with a deadline or a signal began: unfinished messages go to the snapshot, not away. */
  active = false
  /** The deadline passed (or the signal aborted): everything left was handed back. */
  cut = false
  readonly #host: HandBackHost
  readonly #entries: { seq: number; dueAt: number | undefined; message: SnapshotMessage }[] = []
  #deadlineAt = Number.POSITIVE_INFINITY
  #timer: TimerHandle | undefined
  readonly #signals: AbortSignal[] = []
  readonly #onAbort = (): void => this.cutNow()

  /** @param host - the loop */
  constructor(host: HandBackHost) {
    this.#host = host
  }

  /** Arms the cut-off for `deadlineMs` from now and/or `signal` (the earliest deadline wins). */
  arm(deadlineMs: number | undefined, signal: AbortSignal | undefined): void {
    if (deadlineMs === undefined && signal === undefined) return
    this.active = true
    let ms = deadlineMs
    if (signal?.aborted === true) ms = 0
    else if (signal !== undefined) {
      this.#signals.push(signal)
      signal.addEventListener('abort', this.#onAbort, { once: true })
    }
    if (ms === undefined || ms === Number.POSITIVE_INFINITY) return
    if (ms === 0) {
      this.cutNow()
      return
    }
    const at = this.#host.clock.now() + ms
    if (this.#deadlineAt <= at) return
    if (this.#timer !== undefined) this.#host.clock.clearTimeout(this.#timer)
    this.#deadlineAt = at
    this.#timer = this.#host.clock.setTimeout(() => this.cutNow(), ms)
  }

  /** Clears the timer and the signal listener (the stop finished). */
  disarm(): void {
    if (this.#timer !== undefined) this.#host.clock.clearTimeout(this.#timer)
    this.#timer = undefined
    for (const signal of this.#signals) signal.removeEventListener('abort', this.#onAbort)
    this.#signals.length = 0
  }

  /** The cut-off, once. */
  cutNow(): void {
    if (this.cut) return
    this.cut = true
    this.disarm()
    this.#host.cutOff()
  }

  /** Writes `m` into the snapshot; `dueAt` (clock time) for delayed and retry-scheduled ones. */
  add(m: Envelope, state: SnapshotState, dueAt?: number): void {
    m.where = Where.Done
    const entry: { -readonly [K in keyof SnapshotMessage]?: SnapshotMessage[K] } = {
      id: m.id,
      type: m.type,
      payload: m.payload,
      priority: m.priority,
      traceId: m.traceId,
      hops: m.hops,
      state,
    }
    if (m.key !== undefined) entry.key = m.key
    for (const [name, value] of Object.entries(this.#host.extrasOf(m))) {
      if (value !== undefined) (entry as Record<string, unknown>)[name] = value
    }
    this.#entries.push({ seq: m.seq, dueAt, message: entry as SnapshotMessage })
    this.#host.handedBack(m, state)
  }

  /** The snapshot: entries in post order, waits counted from now. */
  take(): LoopSnapshot {
    const now = this.#host.clock.now()
    const messages = this.#entries
      .sort((a, b) => a.seq - b.seq)
      .map(({ dueAt, message }) => (dueAt === undefined ? message : { ...message, dueInMs: Math.max(0, dueAt - now) }))
    this.#entries.length = 0
    return { format: SNAPSHOT_FORMAT, version: SNAPSHOT_VERSION, takenAt: Date.now(), drained: !this.cut, messages }
  }
}
