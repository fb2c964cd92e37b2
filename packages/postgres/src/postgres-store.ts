/**
 * The PostgreSQL journal store: one statement per batch, a lease with a fencing token per process,
 * and takeover of the messages of processes that died.
 *
 * @module
 */
import { type JournalBatch, type Store, type StoreContents, StoreError } from '@flowing/core'
import type pg from 'pg'
import { batchParams } from './internal/batch.js'
import { sendCommit } from './internal/commit.js'
import { storeFailure } from './internal/failure.js'
import type { Lease, LeaseState } from './internal/lease.js'
import { NotifiedTakeovers } from './internal/notified.js'
import { type Opened, openStore } from './internal/open.js'
import { KeyPruner } from './internal/prune.js'
import { channelOf, takeOver } from './internal/takeover.js'
import { Ticker } from './internal/ticker.js'
import { type PostgresStoreOptions, type ResolvedPostgresOptions, resolveOptions } from './options.js'

/**
 * A {@link Store} in PostgreSQL, shareable by several processes. Open one with {@link postgresStore}.
 *
 * @remarks
 * **Atomicity.** {@link PostgresStore.commit} is one SQL statement — the lease check, then the
 * messages, dead letters and keys, each table written by one multi-row statement over arrays — so it
 * is its own transaction and one round trip, whatever the batch's size. A batch is in the database
 * whole or not at all.
 *
 * **Ownership.** Each message row belongs to the store that wrote it (its `owner`); a store recovers,
 * replaces and removes its own rows only. Dead letters and finished keys belong to the journal: every
 * store of the journal recovers them all.
 *
 * **Leases and fencing.** Each store holds a lease (owner, a token that grows with every acquisition,
 * an expiry by the server's clock), renewed every `renewEveryMs` and by every commit. Every commit
 * checks owner, token and expiry in the statement that writes: once the lease has expired, or another
 * store took it over, the commit writes nothing and fails with a `StoreError` of operation `lease` —
 * and so does every later one (the store is fenced for good).
 *
 * **Takeover.** At open, and then on every renewal if the loop called {@link PostgresStore.watch}, the
 * store takes over the rows of every owner whose lease expired or who holds none (a closed store, or
 * `enqueue()`, whose rows have the owner `''`), in one transaction under the journal's advisory lock:
 * no row is taken by two stores. A store that LISTENs also takes over when an enqueue commits.
 *
 * **Cost.** A commit is one round trip, O(rows in the batch) on the server; opening reads every row of
 * the owner, the journal's dead letters and live keys once.
 *
 * @group Store
 */
export class PostgresStore implements Store {
  /** `postgres:`, host, port and database, then `#schema.journal`: `postgres:db:5432/app#flowing.orders`. */
  readonly name: string
  /** The journal's name. */
  readonly journal: string
  /** The schema that holds the tables. */
  readonly schema: string
  readonly #pool: pg.Pool
  readonly #ownsPool: boolean
  readonly #parts: Opened
  readonly #lease: Lease
  readonly #pruner: KeyPruner
  readonly #ticker: Ticker
  // Takeovers on demand: a notification of the journal's channel, a reconnection of the listener.
  #notified: NotifiedTakeovers | undefined
  // What the store held at open, kept for recovered(): the loop reads it once, at start().
  readonly #contents: StoreContents
  #adopt: ((contents: StoreContents) => void) | undefined
  #closed: Promise<void> | undefined
  #commits = 0
  #adopted = 0
  #backgroundError: StoreError | undefined

  private constructor(parts: Opened, options: Pick<ResolvedPostgresOptions, 'renewEveryMs' | 'wallNow' | 'schema'>) {
    this.#parts = parts
    this.name = parts.name
    this.#pool = parts.pool
    this.#ownsPool = parts.ownsPool
    this.#lease = parts.lease
    this.journal = parts.lease.journal
    this.schema = options.schema
    this.#contents = parts.contents
    this.#pruner = new KeyPruner(parts.pool, parts.sql.pruneKeys, this.journal, options.wallNow)
    this.#ticker = new Ticker(options.renewEveryMs, () => this.#tick())
  }

  /**
   * Opens a store; {@link postgresStore} does the same.
   *
   * @throws InvalidArgumentError for an option that breaks its rule
   * @throws StoreError (`open`) when the server cannot be reached, the schema cannot be created or has
   *   another version, or the lease cannot be taken; (`recover`) when the rows cannot be read back
   */
  static async open(options?: PostgresStoreOptions): Promise<PostgresStore> {
    const o = resolveOptions(options)
    const parts = await openStore(o)
    const store = new PostgresStore(parts, o)
    // The LISTEN connection is made at open, not when the loop starts (where its cost would delay the
    // loop's first commits). Its failures are no background errors: it is tried again, `listening`
    // says whether it is up, and the renewals take enqueued messages meanwhile.
    const channel = channelOf(store.schema, store.journal)
    if (o.listen) store.#notified = await NotifiedTakeovers.start(parts.pool, channel, (c) => store.#wakeUp(c))
    return store
  }

  /** The owner this store writes as. */
  get owner(): string {
    return this.#lease.owner
  }

  /** Its lease: the owner, the fencing token, and why it was lost if it was. */
  get lease(): LeaseState {
    return this.#lease.state
  }

  /** Batches committed. */
  get commits(): number {
    return this.#commits
  }

  /** Messages taken over from dead owners while running, and handed to the loop by `watch`. */
  get adopted(): number {
    return this.#adopted
  }

  /**
   * The failure of the last background renewal, takeover or key pruning (a server that is down, a
   * lease found lost), if it failed; `undefined` once one succeeds — a takeover the loop refused stays
   * until a later one is taken. Commits report their own failures.
   */
  get backgroundError(): StoreError | undefined {
    return this.#backgroundError
  }

  /**
   * Whether a connection LISTENs for enqueued messages now: from open (unless the `listen` option is
   * false) until `close()`, but for the moments it is reconnecting.
   */
  get listening(): boolean {
    return this.#notified?.listening === true
  }

  /** Whether {@link PostgresStore.close} was called. */
  get closed(): boolean {
    return this.#closed !== undefined
  }

  /**
   * What the store held for its owner when it was opened: its own messages and those it took over
   * (oldest first), the journal's dead letters and its live keys. The same object every call.
   */
  recovered(): StoreContents {
    return this.#contents
  }

  /**
   * Writes one batch atomically, as the committing owner.
   *
   * @throws StoreError (`lease`) when the lease was lost: nothing is written, now or later;
   *   (`commit`) when the server fails or cannot be reached (the batch may be tried again), or a record
   *   cannot be written as JSON, or the store is closed
   */
  async commit(batch: JournalBatch): Promise<void> {
    if (this.#closed !== undefined) throw new StoreError(this.name, 'commit', 'the store is closed')
    const lost = this.#lease.lost
    if (lost !== undefined) throw new StoreError(this.name, 'lease', lost)
    let params: unknown[]
    try {
      params = batchParams(batch)
    } catch (error) {
      throw storeFailure(this.name, 'commit', error, 'a record cannot be written as JSON')
    }
    const held = await sendCommit(this.#pool, this.#parts.sql.commit, [...this.#lease.params, ...params], this.name)
    if (held !== 1) {
      await this.#lease.fence(this.#pool)
      throw new StoreError(this.name, 'lease', this.#lease.lost ?? 'the lease is lost')
    }
    this.#commits++
  }

  /**
   * Hands the rows this store takes over while running (from processes whose lease expired, and
   * messages enqueued by {@link Enqueuer.enqueue}) to `adopt`; the loop calls it once, at `start()`.
   * From then on the store takes over at every renewal and — unless the `listen` option is false — as
   * soon as an enqueue's transaction commits (a notification that came between open and `watch` counts
   * then). Without it the store takes over only at open.
   */
  watch(adopt: (contents: StoreContents) => void): void {
    this.#adopt = adopt
    this.#notified?.arm()
  }

  /**
   * Stops the renewals, releases the lease (the rows left — messages a stop handed back — can be
   * taken over at once by another process, or recovered by the next store with this owner) and ends
   * the pool if the store created it. Idempotent.
   *
   * @throws StoreError (`close`) when the lease cannot be released (it then expires on its own)
   */
  close(): Promise<void> {
    this.#closed ??= this.#close()
    return this.#closed
  }

  async #close(): Promise<void> {
    await this.#ticker.stop()
    await this.#notified?.stop()
    let failure: StoreError | undefined
    if (this.#lease.lost === undefined) {
      try {
        await this.#lease.release(this.#pool)
      } catch (error) {
        failure = storeFailure(this.name, 'close', error, 'the lease could not be released (it expires on its own)')
      }
    }
    if (this.#ownsPool) await this.#pool.end().catch(() => {})
    if (failure !== undefined) throw failure
  }

  // Renew (taking over dead owners' rows if the loop watches), and now and then prune expired keys.
  async #tick(): Promise<void> {
    if (this.#lease.lost !== undefined || this.#closed !== undefined) return
    try {
      if (this.#adopt === undefined) await this.#lease.renew(this.#pool)
      else await this.#takeOver(this.#adopt)
      const lost = this.#lease.lost
      if (lost !== undefined) {
        this.#backgroundError = new StoreError(this.name, 'lease', lost)
        return
      }
      await this.#pruner.due()
      // A renewal that works clears a renewal's failure; a refused takeover stays until one is taken.
      if (this.#backgroundError?.operation !== 'recover') this.#backgroundError = undefined
    } catch (error) {
      this.#backgroundError = storeFailure(this.name, 'lease', error, 'a background renewal failed')
    }
  }

  // A takeover woken by a notification, on the LISTEN connection: it waits for another store's takeover
  // to end rather than give up (that one may have started before the enqueue committed, and so not see
  // its rows).
  async #wakeUp(client: pg.Client): Promise<void> {
    const adopt = this.#adopt
    if (adopt === undefined || this.#lease.lost !== undefined || this.#closed !== undefined) return
    try {
      await this.#takeOver(adopt, client)
    } catch (error) {
      this.#backgroundError = storeFailure(this.name, 'lease', error, 'a takeover of enqueued messages failed')
    }
  }

  // On the pool, the periodic one gives up when another store is taking over (it will come again); on
  // the LISTEN connection, one woken by a notification waits for it.
  async #takeOver(adopt: (contents: StoreContents) => void, listening?: pg.Client): Promise<void> {
    const db = listening ?? this.#pool
    const result = await takeOver(db, this.#parts.sql, this.#lease, this.#parts.lockKey, listening !== undefined)
    if (result.outcome === 'busy') await this.#lease.renew(this.#pool)
    if (result.outcome !== 'taken' || result.records.length === 0) return
    // Closing: the rows stay this owner's, and its released lease hands them to the next store.
    if (this.#closed !== undefined) return
    this.#adopted += result.records.length
    try {
      adopt({ messages: result.records, deadLetters: [], keys: [] })
      this.#backgroundError = undefined
    } catch (error) {
      // The rows are this owner's now: the next store with this owner recovers them.
      const problem = `the loop refused ${result.records.length} taken-over messages`
      throw storeFailure(this.name, 'recover', error, problem)
    }
  }
}

/**
 * Opens a PostgreSQL journal store: connects, creates the schema if it is missing, takes the lease,
 * takes over the messages of dead owners and reads everything back — so the store's `recovered()` is
 * ready when the promise resolves.
 *
 * @param options - where the database is and which journal; see {@link PostgresStoreOptions}
 * @throws InvalidArgumentError for an option that breaks its rule
 * @throws StoreError (`open`, `recover`) when the store cannot be opened or read
 *
 * @example
 * ```ts no-run
 * import { createLoop } from '@flowing/core'
 * import { postgresStore } from '@flowing/postgres'
 *
 * const store = await postgresStore({ connectionString: process.env['DATABASE_URL'], journal: 'orders' })
 * const loop = createLoop<{ 'order.paid': { id: string } }>({ store })
 * ```
 *
 * @group Store
 */
export function postgresStore(options?: PostgresStoreOptions): Promise<PostgresStore> {
  return PostgresStore.open(options)
}
