/**
 * The journal stage: keeps a loop's {@link Store} in step with what the loop holds. Stages mark a
 * message when it makes a transition a restart must know (admitted, delayed, backing off, committed,
 * finished); once per event-loop turn the marked messages become one batch — the record of each as it
 * stands then, or its removal — so a message that is posted and finished within one turn costs the store
 * nothing. One commit runs at a time; a failed one is reported, its changes are kept and tried again.
 * Its run state is one {@link JournalPhase}; `docs/design/journal.md` tells the whole design.
 *
 * ```
 *  touch(m) ─▶ dirty ──(next turn)──▶ batch ─▶ store.commit ─▶ on disk ─▶ flushed() waiters
 *                                                   └─ fails ─▶ StoreError: refuse posts, retry
 * ```
 *
 * @module
 */
import type { Clock } from '../contracts/clock.js'
import type { DeadLetter } from '../contracts/failures.js'
import type { MessageMap } from '../contracts/message.js'
import type { SnapshotState } from '../contracts/snapshot.js'
import type { JournalStats, KeyRecord, Store } from '../contracts/store.js'
import { InvalidArgumentError, StoreError } from '../errors.js'
import type { Envelope } from '../internal/envelope.js'
import type { LoopEmitter } from '../internal/loop-emitter.js'
import { Histogram } from '../metrics/histogram.js'
import { Changes, callCommit, clearTimer, describe, type Pending, toBatch, type Waiter } from './batch.js'
import { CrashGuard } from './crash-guard.js'
import { jsonText } from './json-text.js'
import { commitsIn, type JournalPhase, nextPhase } from './phase.js'
import type { RecordParts, SavedFields } from './records.js'
import { Rows } from './rows.js'

/** The parts the journal reads records from. */
export interface JournalParts<M extends MessageMap> extends RecordParts {
  readonly clock: Clock
  readonly events: LoopEmitter<M>
  /** The crash-loop limit of a type: its own `maxCrashes`, else the loop's. */
  maxCrashesFor(type: string): number
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
  /** The crash-loop guard: counts the attempts crashes interrupted, ends a crash loop. */
  readonly guard: CrashGuard
  readonly #p: JournalParts<M>
  // Where the commit loop is: the one answer to "is a flush due, a commit in flight, a retry waiting,
  // a close under way" (see phase.ts).
  #phase: JournalPhase = 'idle'
  // What changed since the last batch was built.
  #changes = new Changes()
  // What each message's row says, and which messages have one.
  readonly #rows: Rows
  // Batches built, and the last one committed (flushed() waiters wait for a batch number).
  #built = 0
  #committed = 0
  #commits = 0
  #failedCommits = 0
  readonly #commitTime = new Histogram()
  #waiters: Waiter[] = []
  // Why posts are refused: the last commit failed (or has not answered in SLOW_COMMIT_MS). Health, not
  // run state: it outlives the phase that set it, until a commit succeeds.
  #failure: StoreError | undefined
  #retryMs = FIRST_RETRY_MS
  // The back-off's timer, in the `backing-off` phase.
  #retryTimer: unknown
  // close()'s one run.
  #closed: Promise<void> | undefined
  // Turns a small batch has waited to gather more, and when its first change was made.
  #gathered = 0
  #since = 0
  readonly #flushNow = (): void => {
    if (this.#phase !== 'scheduled') return // close() took over: it commits at once
    if (this.#gathers()) {
      this.#gathered++
      this.#p.clock.setImmediate(this.#flushNow)
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
    const { extras, clock, maxCrashesFor } = parts
    this.guard = new CrashGuard({ journal: this, extras, clock, maxCrashesFor })
    const guard = this.guard
    this.#rows = new Rows({ ...parts, running: (m) => guard.running(m) })
  }

  /** Where the commit loop is (see phase.ts): read-only, for the loop's diagnostics and tests. */
  get phase(): JournalPhase {
    return this.#phase
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
      rows: this.#rows.size,
      pending: this.#changes.dirty.size,
      commits: this.#commits,
      failedCommits: this.#failedCommits,
      failing: this.#failure !== undefined,
      commitTime: this.#commitTime.snapshot(),
    }
  }

  /** The JSON text a payload or checkpoint is journaled as (see `jsonText`). */
  static readonly json = jsonText

  /** An admitted message and its payload's JSON: its row is written at the next commit. */
  admitted(m: Envelope, payloadJson: string | undefined): void {
    this.#rows.admitted(m, payloadJson)
    this.touch(m)
  }

  /** `m` made a transition a restart must know. */
  touch(m: Envelope): void {
    this.#changes.dirty.add(m)
    this.#wake()
  }

  /** `m` committed `checkpointJson` (`ctx.commit()`). */
  committed(m: Envelope, checkpointJson: string | undefined): void {
    this.#rows.committed(m, checkpointJson)
    this.touch(m)
  }

  /**
   * A dead letter of `m` as the journal keeps it: its payload and checkpoint as they were taken at
   * post and at commit (a handler may have changed the objects since, even into something JSON
   * cannot represent).
   */
  letterOf(m: Envelope, letter: DeadLetter): DeadLetter {
    return this.#rows.letterOf(m, letter)
  }

  /** `m` waits on the wheel until `dueAt` (clock time): delayed, or backing off. */
  timed(m: Envelope, dueAt: number): void {
    this.#rows.timed(m, dueAt)
    this.touch(m)
  }

  /** A stop handed `m` back: its row stays, in the state the snapshot records. */
  saved(m: Envelope, state: SnapshotState, fields: SavedFields, dueAt?: number): void {
    this.#rows.saved(m, state, fields, dueAt)
    this.touch(m)
  }

  /** A dead letter entered the store, or (`null`) left it. */
  letter(id: string, letter: DeadLetter | null): void {
    this.#changes.letter(id, letter)
    this.#wake()
  }

  /** A finished idempotency key (`done`, `failed`), or (`null`) one released. */
  key(key: string, record: KeyRecord | null): void {
    this.#changes.key(key, record)
    this.#wake()
  }

  /** Rows of a recovered (or adopted) message that now lives under a new id. */
  forgetIds(ids: readonly string[]): void {
    this.#changes.remove(ids)
    this.#wake()
  }

  /**
   * Resolves once everything the loop accepted so far is committed; rejects with the `StoreError` of
   * the commit that was to include it (what it held is kept and tried again).
   * @param soon - the next batch does not wait to gather more (a gated start waits for it)
   */
  flushed(soon = false): Promise<void> {
    if (soon) this.#gathered = GATHER_TURNS
    if (this.#phase === 'closed') {
      if (!this.#changes.any) return Promise.resolve()
      const problem = 'the loop stopped and closed its store: changes made since were not committed'
      return Promise.reject(new StoreError(this.store.name, 'commit', problem))
    }
    const target = this.#changes.any ? this.#built + 1 : commitsIn(this.#phase) ? this.#built : 0
    if (target <= this.#committed) return Promise.resolve()
    return new Promise((resolve, reject) => this.#waiters.push({ batch: target, resolve, reject }))
  }

  /** Commits what is left, then closes the store (once; a failure is reported, not thrown). */
  close(): Promise<void> {
    this.#closed ??= this.#closeOnce()
    return this.#closed
  }

  async #closeOnce(): Promise<void> {
    this.#enter(commitsIn(this.#phase) ? 'closing-commit' : 'closing')
    clearTimer(this.#p.clock, this.#retryTimer)
    this.#retryTimer = undefined
    // Each pass commits what is left now (not at the next turn: a stop on a virtual clock needs no one to
    // drive it). A failed pass is reported as `store-error`; after two the store is closed with the batch
    // unwritten. A commit that began meanwhile (a change made while closing) is awaited too: the store is
    // never closed under a commit.
    let failures = 0
    while (failures < 2) {
      const done = this.flushed()
      this.#flush()
      try {
        await done
        if (!commitsIn(this.#phase) && !this.#changes.any) break
      } catch {
        failures++
      }
    }
    this.#enter('closed')
    try {
      await this.store.close()
    } catch (error) {
      this.#report(new StoreError(this.store.name, 'close', describe(error), error))
    }
  }

  // A change was made: a flush is due at the next turn, unless one is due already, a commit is in flight
  // (its answer looks again), a failed commit waits for its retry (changes gather for it: the back-off
  // holds) or close() took over (it commits at once).
  #wake(): void {
    if (this.#phase !== 'idle') return
    if (this.#gathered === 0) this.#since = this.#p.clock.now()
    this.#enter('scheduled')
    this.#p.clock.setImmediate(this.#flushNow)
  }

  // Group commit: a batch too small to pay for its transaction waits a few more turns (a handler that
  // awaits I/O finishes a message per turn), never past GATHER_MS after its first change.
  #gathers(): boolean {
    if (this.#gathered >= GATHER_TURNS || this.#changes.rows >= GATHER_ROWS) return false
    return this.#p.clock.now() - this.#since < GATHER_MS
  }

  #enter(next: JournalPhase): void {
    this.#phase = nextPhase(this.#phase, next)
  }

  // Commits what changed, now: from `scheduled` (its turn came), `backing-off` (its retry is due) or
  // `closing`. A commit in flight, or a closed journal, commits nothing (the answer looks again).
  #flush(): void {
    const from = this.#phase
    if (from !== 'scheduled' && from !== 'backing-off' && from !== 'closing') return
    if (!this.#changes.any) {
      if (from !== 'closing') this.#enter('idle')
      return
    }
    const pending = this.#build()
    this.#enter(from === 'closing' ? 'closing-commit' : 'committing')
    const batch = ++this.#built
    const started = this.#p.clock.now()
    const settled = callCommit(this.store, toBatch(pending), {
      ok: () => this.#succeeded(pending, batch, started),
      failed: (error) => this.#failed(pending, batch, error),
    })
    if (settled !== undefined) this.#watchSlow(batch, settled)
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
    const { marked, pending } = this.#changes.take()
    for (const m of marked) if (!this.#rows.add(pending, m)) this.#changes.dirty.add(m) // the next batch has it
    return pending
  }

  #succeeded(pending: Pending, batch: number, started: number): void {
    this.#commits++
    this.#commitTime.record(this.#p.clock.now() - started)
    this.#rows.written(pending)
    this.#answered()
    this.#committed = batch
    const waiters = this.#waiters
    this.#waiters = waiters.filter((w) => w.batch > batch)
    for (const w of waiters) if (w.batch <= batch) w.resolve()
    if (this.#failure !== undefined) {
      this.#failure = undefined
      this.#retryMs = FIRST_RETRY_MS
      this.#p.events.emit('store-recovered', this.store.name)
    }
    if (!this.#changes.any) return
    if (this.#phase === 'closing') this.#flush()
    else this.#wake()
  }

  // The commit in flight answered: the phase it ran in goes on without it.
  #answered(): void {
    if (this.#phase === 'committing') this.#enter('idle')
    else if (this.#phase === 'closing-commit') this.#enter('closing')
  }

  // The batch's changes go back to be written again (later changes of the same rows win).
  #failed(pending: Pending, batch: number, cause: unknown): void {
    this.#failedCommits++
    this.#built = batch - 1 // the next batch takes its number: waiters keep their place
    this.#changes.giveBack(pending)
    const error =
      cause instanceof StoreError ? cause : new StoreError(this.store.name, 'commit', describe(cause), cause)
    const waiters = this.#waiters
    this.#waiters = []
    for (const w of waiters) w.reject(error)
    // The back-off begins before the report, so a listener's change gathers for the retry; while
    // closing, a failure is not retried (close() tries once more, then closes the store).
    if (this.#phase === 'committing') this.#retryLater()
    else this.#answered()
    this.#report(error)
  }

  #retryLater(): void {
    this.#enter('backing-off')
    this.#retryTimer = this.#p.clock.setTimeout(() => {
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
