/**
 * What the journal knows of each message beyond the envelope: the JSON of its payload and checkpoint
 * as they were given, its due time, the record a stop handed back, and whether it has a row in the
 * store. A batch reads a marked message's record here as it stands when the batch is built.
 *
 * @module
 */

import { wallNow } from '../clock.js'
import type { Clock } from '../contracts/clock.js'
import type { DeadLetter } from '../contracts/failures.js'
import type { SnapshotState } from '../contracts/snapshot.js'
import type { JournalRecord } from '../contracts/store.js'
import { type Envelope, Where } from '../internal/envelope.js'
import type { Pending } from './batch.js'
import { type RecordParts, recordOf, type SavedFields } from './records.js'

/** Where rows are read from: the side tables of a message's per-post fields, and the loop's clock. */
export interface RowParts extends RecordParts {
  readonly clock: Clock
  /** Whether the handler of `m` runs now (its row then says so: a crash would interrupt it). */
  running(m: Envelope): boolean
}

/** The journal's view of each message it keeps a row for. */
export class Rows {
  readonly #p: RowParts
  // Messages with a row in the store.
  readonly #onDisk = new Set<Envelope>()
  // Payload JSON taken at admission (a durable message is what was posted, whatever happens to the object).
  readonly #payloads = new Map<Envelope, string | undefined>()
  // Checkpoint JSON taken at `ctx.commit()` (the object may change afterwards).
  readonly #checkpoints = new Map<Envelope, string | undefined>()
  // Clock due times of delayed and backing-off messages.
  readonly #due = new Map<Envelope, number>()
  // Records of messages handed back by a stop: they stay in the store for the next start.
  readonly #saved = new Map<Envelope, JournalRecord>()

  /** @param parts - where records are read from */
  constructor(parts: RowParts) {
    this.#p = parts
  }

  /** Messages with a row in the store (committed, unfinished). */
  get size(): number {
    return this.#onDisk.size
  }

  /** `m` was admitted with this payload JSON. */
  admitted(m: Envelope, payloadJson: string | undefined): void {
    this.#payloads.set(m, payloadJson)
  }

  /** `m` committed this checkpoint JSON. */
  committed(m: Envelope, checkpointJson: string | undefined): void {
    this.#checkpoints.set(m, checkpointJson)
  }

  /** `m` waits until `dueAt` (clock time). */
  timed(m: Envelope, dueAt: number): void {
    this.#due.set(m, dueAt)
  }

  /** A stop handed `m` back in `state`: its record is taken now (its side tables go). */
  saved(m: Envelope, state: SnapshotState, fields: SavedFields, dueAt?: number): void {
    const due = dueAt === undefined ? undefined : this.#epochOf(dueAt)
    this.#saved.set(m, this.#record(m, state, due, fields))
  }

  /** A dead letter of `m` with its payload and checkpoint as they were taken at post and at commit. */
  letterOf(m: Envelope, letter: DeadLetter): DeadLetter {
    const payloadJson = this.#payloads.get(m)
    const payload = payloadJson === undefined ? undefined : JSON.parse(payloadJson)
    if (!this.#checkpoints.has(m)) return { ...letter, payload }
    const checkpoint = this.#checkpoints.get(m)
    return { ...letter, payload, checkpoint: checkpoint === undefined ? true : JSON.parse(checkpoint) }
  }

  /**
   * Adds marked `m` to `pending` as it stands now: its record, or (finished) its row's removal — none
   * when it never had a row.
   * @returns false when `m` cannot be written yet (its outcome is being recorded): mark it again
   */
  add(pending: Pending, m: Envelope): boolean {
    const saved = this.#saved.get(m)
    const w = m.where
    if (saved !== undefined) {
      pending.puts.push(m)
      pending.records.push(saved)
    } else if (w === Where.Done) {
      this.#payloads.delete(m)
      this.#checkpoints.delete(m)
      this.#due.delete(m)
      if (this.#onDisk.has(m)) {
        pending.gone.push(m)
        pending.removed.push(m.id)
      }
    } else if (w !== Where.HandedOver) {
      const { state, due } = this.#stateOf(m)
      pending.puts.push(m)
      pending.records.push(this.#record(m, state, due, undefined, this.#p.running(m)))
    } else {
      return false
    }
    return true
  }

  /** `pending` committed: its puts have rows now, its removals none. */
  written(pending: Pending): void {
    for (const m of pending.puts) {
      this.#onDisk.add(m)
      this.#saved.delete(m)
    }
    for (const m of pending.gone) this.#onDisk.delete(m)
  }

  // The record of `m`, with the payload and checkpoint JSON taken when they were given.
  #record(
    m: Envelope,
    state: SnapshotState,
    due: number | undefined,
    fields?: SavedFields,
    running = false,
  ): JournalRecord {
    const r = recordOf(this.#p, m, this.#payloads.get(m), state, due, fields, running)
    if (!this.#checkpoints.has(m)) return r
    const text = this.#checkpoints.get(m)
    return { ...r, checkpoint: text === undefined ? true : JSON.parse(text) }
  }

  #stateOf(m: Envelope): { state: SnapshotState; due: number | undefined } {
    const w = m.where
    if (w === Where.Delayed || w === Where.Overdue || w === Where.Backoff) {
      const due = this.#epochOf(this.#due.get(m) ?? this.#p.clock.now())
      return { state: w === Where.Backoff ? 'retry-scheduled' : 'delayed', due }
    }
    this.#due.delete(m)
    return { state: 'queued', due: undefined }
  }

  #epochOf(dueAt: number): number {
    const { clock } = this.#p
    return wallNow(clock) + Math.max(0, dueAt - clock.now())
  }
}
