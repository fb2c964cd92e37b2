/**
 * The end of a stop with a deadline: when the deadline passes (or the stop's signal aborts), every
 * unfinished message is handed back — written into the snapshot the stop resolves with — and what
 * still runs is aborted. This file holds the cut-off's timing and the snapshot being written; the loop
 * says where its messages are.
 *
 * @module
 */
import type { AbortSignalLike } from '@flowing/watchdog'
import type { Clock, TimerHandle } from '../contracts/clock.js'
import type { LoopSnapshot, SnapshotMessage, SnapshotState } from '../contracts/snapshot.js'
import { NO_HEADERS } from '../headers.js'
import type { Envelope } from '../internal/envelope.js'
import { newSnapshot } from './snapshot.js'

/** What a snapshot entry carries beyond the envelope. */
export type EntryExtras = {
  readonly [K in
    | 'attempts'
    | 'idempotencyKey'
    | 'checkpoint'
    | 'retry'
    | 'handlerTimeoutMs'
    | 'group'
    | 'job'
    | 'schedule'
    | 'crashes']: SnapshotMessage[K] | undefined
}

/** The deadline, the signal, and the snapshot being written. */
export class HandBack {
  // The cut-off ran (once).
  #cut = false
  readonly #clock: Clock
  // The cut-off: hand every unfinished message back, then abort what runs.
  readonly #cutOff: () => void
  readonly #entries: { seq: number; dueAt: number | undefined; message: SnapshotMessage }[] = []
  #deadlineAt = Number.POSITIVE_INFINITY
  #timer: TimerHandle | undefined
  readonly #signals: AbortSignal[] = []
  readonly #onAbort = (): void => this.cutNow()

  /**
   * @param clock - the loop's clock
   * @param cutOff - hands every unfinished message back (through the outcomes), then aborts what runs
   */
  constructor(clock: Clock, cutOff: () => void) {
    this.#clock = clock
    this.#cutOff = cutOff
  }

  /** Arms the cut-off for `deadlineMs` from now and/or `signal` (the earliest deadline wins). */
  arm(deadlineMs: number | undefined, signal: AbortSignalLike | undefined): void {
    if (deadlineMs === undefined && signal === undefined) return
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
    const at = this.#clock.now() + ms
    if (this.#deadlineAt <= at) return
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer)
    this.#deadlineAt = at
    this.#timer = this.#clock.setTimeout(() => this.cutNow(), ms)
  }

  /** Clears the timer and the signal listener (the stop finished). */
  disarm(): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer)
    this.#timer = undefined
    for (const signal of this.#signals) signal.removeEventListener('abort', this.#onAbort)
    this.#signals.length = 0
  }

  /** The cut-off, once. */
  cutNow(): void {
    if (this.#cut) return
    this.#cut = true
    this.disarm()
    this.#cutOff()
  }

  /**
   * Writes `m` into the snapshot (only the outcomes call this: it is the `snapshotted` outcome's record);
   * `dueAt` (clock time) for delayed and retry-scheduled ones.
   */
  write(m: Envelope, state: SnapshotState, extras: EntryExtras, dueAt: number | undefined): void {
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
    if (m.headers !== NO_HEADERS) entry.headers = m.headers
    for (const [name, value] of Object.entries(extras)) {
      if (value !== undefined) (entry as Record<string, unknown>)[name] = value
    }
    this.#entries.push({ seq: m.seq, dueAt, message: entry as SnapshotMessage })
  }

  /** The snapshot: entries in post order, waits counted from now. */
  take(): LoopSnapshot {
    const now = this.#clock.now()
    const messages = this.#entries
      .sort((a, b) => a.seq - b.seq)
      .map(({ dueAt, message }) => (dueAt === undefined ? message : { ...message, dueInMs: Math.max(0, dueAt - now) }))
    this.#entries.length = 0
    return newSnapshot(this.#clock, messages, !this.#cut)
  }
}
