/**
 * The journal stage: keeps a loop's {@link Store} in step with what the loop holds. Stages mark a
 * message when it makes a transition a restart must know (admitted, delayed, backing off, committed,
 * finished); once per event-loop turn the marked messages become one batch — the record of each as it
 * stands then, or its removal — so a message that is posted and finished within one turn costs the store
 * nothing. One commit runs at a time; a failed one is reported, its changes are kept and tried again.
 *
 * ```
 *  touch(m) ─▶ dirty ──(next turn)──▶ batch ─▶ store.commit ─▶ on disk ─▶ flushed() waiters
 *                                                   └─ fails ─▶ StoreError: refuse posts, retry
 * ```
 *
 * @module
 */
import { wallNow } from '../clock.js'
import type { Clock } from '../contracts/clock.js'
import type { DeadLetter } from '../contracts/failures.js'
import type { MessageMap } from '../contracts/message.js'
import type { SnapshotState } from '../contracts/snapshot.js'
import type { JournalRecord, JournalStats, KeyRecord, Store } from '../contracts/store.js'
import { InvalidArgumentError, StoreError } from '../errors.js'
import { type Envelope, Where } from '../internal/envelope.js'
import type { LoopEmitter } from '../internal/loop-emitter.js'
import { Histogram } from '../metrics/histogram.js'
import { clearTimer, describe, type Pending, toBatch, type Waiter } from './batch.js'
import { type RecordParts, recordOf, type SavedFields } from './records.js'

/** The parts the journal reads records from. */
export interface JournalParts<M extends MessageMap> extends RecordParts {
  readonly clock: Clock
  readonly events: LoopEmitter<M>
}

/** A commit that has not answered after this long is reported as a `StoreError` (posts are refused meanwhile). */
export const SLOW_COMMIT_MS = 10_000
// A batch commits when it has GATHER_ROWS changes, has waited GATHER_TURNS turns, or is GATHER_MS old.
const GATHER_ROWS = 256
const GATHER_TURNS = 16
const GATHER_MS = 2
const FIRST_RETRY_MS = 50
const MAX_RETRY_MS = 5_000

/** One loop's journal over its store. */
export class Journal<M extends MessageMap> {
  readonly store: Store
  readonly #p: JournalParts<M>
  // Messages whose latest transition is not in the store yet.
  #dirty = new Set<Envelope>()
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
  #removed: string[] = []
  #letters = new Map<string, DeadLetter | null>()
  #keys = new Map<string, KeyRecord | null>()
  #scheduled = false
  #inFlight: Pending | undefined
  #built = 0
  #committed = 0
  #commits = 0
  #failedCommits = 0
  readonly #commitTime = new Histogram()
  #waiters: Waiter[] = []
  #failure: StoreError | undefined
  #retryMs = FIRST_RETRY_MS
  #retryTimer: unknown
  #closed: Promise<void> | undefined
  // close() began: what is left is committed at once, and a failure is not retried.
  #closing = false
  #ended = false
  // Turns a small batch has waited to gather more, and when its first change was made.
  #gathered = 0
  #since = 0
  readonly #flushNow = (): void => {
    this.#scheduled = false
    if (this.#gathers()) {
      this.#gathered++
      this.#wake()
      return
    }
    this.#gathered = 0
    this.#flush()
  }

  /**
   * @param store - the user's store
   * @param parts - where records are read from
   */
  constructor(store: Store, parts: JournalParts<M>) {
    this.store = store
    this.#p = parts
  }

  /** Why new posts are refused now (the last commit failed), if they are. */
  get failure(): StoreError | undefined {
    return this.#failure
  }

  /** Why a post is refused now: the last commit failed, or `start()` has not recovered the journal. */
  get refusal(): StoreError | undefined {
    if (this.#failure !== undefined) return this.#failure
    if (this.recovered) return undefined
    return new StoreError(
      this.store.name,
      'recover',
      'posts are accepted from start() on, which recovers the journal first (so recovered messages keep their place before new ones)',
    )
  }

  /** Whether `start()` recovered the journal (posts are accepted from then on). */
  recovered = false

  /** The journal's figures now. */
  stats(): JournalStats {
    return {
      store: this.store.name,
      rows: this.#onDisk.size,
      pending: this.#dirty.size,
      commits: this.#commits,
      failedCommits: this.#failedCommits,
      failing: this.#failure !== undefined,
      commitTime: this.#commitTime.snapshot(),
    }
  }

  /**
   * The JSON text a payload or checkpoint is journaled as.
   * @param name - what it is, for the error (`payload`, `checkpoint`)
   * @throws InvalidArgumentError when JSON cannot represent it (a cycle, a BigInt, a throwing `toJSON`)
   */
  static json(name: string, value: unknown): string | undefined {
    let text: string | undefined
    try {
      text = JSON.stringify(value)
    } catch (error) {
      throw new InvalidArgumentError(name, `JSON-serializable (the loop journals it): ${describe(error)}`, value)
    }
    if (text === undefined && value !== undefined) {
      throw new InvalidArgumentError(name, 'JSON-serializable (the loop journals it)', value)
    }
    return text
  }

  /** An admitted message and its payload's JSON: its row is written at the next commit. */
  admitted(m: Envelope, payloadJson: string | undefined): void {
    this.#payloads.set(m, payloadJson)
    this.touch(m)
  }

  /** `m` made a transition a restart must know. */
  touch(m: Envelope): void {
    this.#dirty.add(m)
    this.#wake()
  }

  /** `m` committed `checkpointJson` (`ctx.commit()`). */
  committed(m: Envelope, checkpointJson: string | undefined): void {
    this.#checkpoints.set(m, checkpointJson)
    this.touch(m)
  }

  /**
   * A dead letter of `m` as the journal keeps it: its payload and checkpoint as they were taken at
   * post and at commit (a handler may have changed the objects since, even into something JSON
   * cannot represent).
   */
  letterOf(m: Envelope, letter: DeadLetter): DeadLetter {
    const payloadJson = this.#payloads.get(m)
    const payload = payloadJson === undefined ? undefined : JSON.parse(payloadJson)
    if (!this.#checkpoints.has(m)) return { ...letter, payload }
    const checkpoint = this.#checkpoints.get(m)
    return { ...letter, payload, checkpoint: checkpoint === undefined ? true : JSON.parse(checkpoint) }
  }

  /** `m` waits on the wheel until `dueAt` (clock time): delayed, or backing off. */
  timed(m: Envelope, dueAt: number): void {
    this.#due.set(m, dueAt)
    this.touch(m)
  }

  /** A stop handed `m` back: its row stays, in the state the snapshot records. */
  saved(m: Envelope, state: SnapshotState, fields: SavedFields, dueAt?: number): void {
    const due = dueAt === undefined ? undefined : this.#epochOf(dueAt)
    this.#saved.set(m, this.#record(m, state, due, fields))
    this.touch(m)
  }

  /** A dead letter entered the store, or (`null`) left it. */
  letter(id: string, letter: DeadLetter | null): void {
    this.#letters.set(id, letter)
    this.#wake()
  }

  /** A finished idempotency key (`done`, `failed`), or (`null`) one released. */
  key(key: string, record: KeyRecord | null): void {
    this.#keys.set(key, record)
    this.#wake()
  }

  /** Rows of a recovered (or adopted) message that now lives under a new id. */
  forgetIds(ids: readonly string[]): void {
    for (const id of ids) this.#removed.push(id)
    this.#wake()
  }

  /**
   * Resolves once everything the loop accepted so far is committed; rejects with the `StoreError` of
   * the commit that was to include it (what it held is kept and tried again).
   */
  flushed(): Promise<void> {
    if (this.#ended) {
      if (!this.#hasChanges()) return Promise.resolve()
      const problem = 'the loop stopped and closed its store: changes made since were not committed'
      return Promise.reject(new StoreError(this.store.name, 'commit', problem))
    }
    const target = this.#hasChanges() ? this.#built + 1 : this.#inFlight === undefined ? 0 : this.#built
    if (target <= this.#committed) return Promise.resolve()
    return new Promise((resolve, reject) => this.#waiters.push({ batch: target, resolve, reject }))
  }

  /** Commits what is left, then closes the store (once; a failure is reported, not thrown). */
  close(): Promise<void> {
    this.#closed ??= this.#closeOnce()
    return this.#closed
  }

  async #closeOnce(): Promise<void> {
    this.#closing = true
    clearTimer(this.#p.clock, this.#retryTimer)
    this.#retryTimer = undefined
    for (let tries = 0; tries < 2; tries++) {
      const done = this.flushed()
      this.#flush() // now, not at the next turn: a stop on a virtual clock needs no one to drive it
      try {
        await done
        break
      } catch {
        // reported as `store-error`; one more try, then the store is closed with the batch unwritten
      }
    }
    this.#ended = true // a flush scheduled before the close finds nothing to do
    try {
      await this.store.close()
    } catch (error) {
      this.#report(new StoreError(this.store.name, 'close', describe(error), error))
    }
  }

  #wake(): void {
    // While a failed commit waits for its retry, changes gather for it (the back-off holds).
    if (!this.#scheduled && this.#inFlight === undefined && this.#retryTimer === undefined) {
      if (this.#gathered === 0) this.#since = this.#p.clock.now()
      this.#scheduled = true
      this.#p.clock.setImmediate(this.#flushNow)
    }
  }

  // Group commit: a batch too small to pay for its transaction waits a few more turns (a handler that
  // awaits I/O finishes a message per turn), never past GATHER_MS after its first change.
  #gathers(): boolean {
    if (this.#closing || this.#gathered >= GATHER_TURNS) return false
    if (this.#dirty.size + this.#removed.length >= GATHER_ROWS) return false
    return this.#p.clock.now() - this.#since < GATHER_MS
  }

  #hasChanges(): boolean {
    return this.#dirty.size > 0 || this.#removed.length > 0 || this.#letters.size > 0 || this.#keys.size > 0
  }

  #flush(): void {
    if (this.#ended || this.#inFlight !== undefined || !this.#hasChanges()) return
    const pending = this.#build()
    this.#inFlight = pending
    const batch = ++this.#built
    const started = this.#p.clock.now()
    let settled = false // a thenable that answers twice, or both ways, counts once
    const ok = () => {
      if (settled) return
      settled = true
      this.#succeeded(pending, batch, started)
    }
    const failed = (error: unknown) => {
      if (settled) return
      settled = true
      this.#failed(pending, batch, error)
    }
    try {
      const result = this.store.commit(toBatch(pending)) as unknown
      const then = (result as { then?: unknown } | null | undefined)?.then
      if (typeof then !== 'function') {
        ok()
        return
      }
      this.#watchSlow(batch, () => settled)
      then.call(result, ok, failed)
    } catch (error) {
      failed(error) // the commit, or its thenable's `then`, threw
    }
  }

  // A commit that does not answer within SLOW_COMMIT_MS is reported, and posts are refused until it does.
  #watchSlow(batch: number, settled: () => boolean): void {
    const { clock } = this.#p
    const timer = clock.setTimeout(() => {
      if (settled() || this.#built !== batch) return
      const problem = `the commit has not answered in ${SLOW_COMMIT_MS} ms (it is still awaited)`
      this.#report(new StoreError(this.store.name, 'commit', problem))
    }, SLOW_COMMIT_MS)
    ;(timer as { unref?: () => void }).unref?.()
  }

  // Every marked message becomes its record as it stands now, or its row's removal.
  #build(): Pending {
    const pending: Pending = {
      puts: [],
      records: [],
      gone: [],
      removed: this.#removed,
      letters: this.#letters,
      keys: this.#keys,
    }
    this.#removed = []
    this.#letters = new Map()
    this.#keys = new Map()
    const dirty = this.#dirty
    this.#dirty = new Set()
    for (const m of dirty) this.#add(pending, m)
    return pending
  }

  #add(pending: Pending, m: Envelope): void {
    const saved = this.#saved.get(m)
    if (saved !== undefined) {
      pending.puts.push(m)
      pending.records.push(saved)
    } else if (m.where === Where.Done) {
      this.#payloads.delete(m)
      this.#checkpoints.delete(m)
      this.#due.delete(m)
      if (this.#onDisk.has(m)) {
        pending.gone.push(m)
        pending.removed.push(m.id)
      }
    } else if (m.where !== Where.HandedOver) {
      const { state, due } = this.#stateOf(m)
      pending.puts.push(m)
      pending.records.push(this.#record(m, state, due))
    } else {
      this.#dirty.add(m) // its outcome is being written: the next batch has it
    }
  }

  // The record of `m`, with the payload and checkpoint JSON taken when they were given.
  #record(m: Envelope, state: SnapshotState, due: number | undefined, fields?: SavedFields): JournalRecord {
    const r = recordOf(this.#p, m, this.#payloads.get(m), state, due, fields)
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

  #succeeded(pending: Pending, batch: number, started: number): void {
    this.#commits++
    this.#commitTime.record(this.#p.clock.now() - started)
    for (const m of pending.puts) {
      this.#onDisk.add(m)
      this.#saved.delete(m)
    }
    for (const m of pending.gone) this.#onDisk.delete(m)
    this.#inFlight = undefined
    this.#committed = batch
    const waiters = this.#waiters
    this.#waiters = waiters.filter((w) => w.batch > batch)
    for (const w of waiters) if (w.batch <= batch) w.resolve()
    if (this.#failure !== undefined) {
      this.#failure = undefined
      this.#retryMs = FIRST_RETRY_MS
      this.#p.events.emit('store-recovered', this.store.name)
    }
    if (!this.#hasChanges()) return
    if (this.#closing) this.#flush()
    else this.#wake()
  }

  // The batch's changes go back to be written again (later changes of the same rows win).
  #failed(pending: Pending, batch: number, cause: unknown): void {
    this.#failedCommits++
    this.#inFlight = undefined
    this.#built = batch - 1 // the next batch takes its number: waiters keep their place
    // In front of what changed since: new rows go to the store in first-journaled (post) order.
    this.#dirty = new Set([...pending.puts, ...pending.gone, ...this.#dirty])
    const gone = new Set(pending.gone.map((m) => m.id)) // rebuilt from their envelopes
    for (const id of pending.removed) if (!gone.has(id)) this.#removed.push(id)
    for (const [id, letter] of pending.letters) if (!this.#letters.has(id)) this.#letters.set(id, letter)
    for (const [key, record] of pending.keys) if (!this.#keys.has(key)) this.#keys.set(key, record)
    const error =
      cause instanceof StoreError ? cause : new StoreError(this.store.name, 'commit', describe(cause), cause)
    const waiters = this.#waiters
    this.#waiters = []
    for (const w of waiters) w.reject(error)
    this.#report(error)
    if (!this.#closing) this.#retryLater()
  }

  #retryLater(): void {
    const { clock } = this.#p
    clearTimer(clock, this.#retryTimer)
    this.#retryTimer = clock.setTimeout(() => {
      this.#retryTimer = undefined
      this.#flush()
    }, this.#retryMs)
    this.#retryMs = Math.min(MAX_RETRY_MS, this.#retryMs * 2)
  }

  #report(error: StoreError): void {
    this.#failure = error
    this.#p.events.emit('store-error', error)
  }
}
