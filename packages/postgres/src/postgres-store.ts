/**
 * The PostgreSQL journal store: one statement per batch, a lease with a fencing token per process,
 * and takeover of the messages of processes that died.
 *
 * @module
 */
import { type JournalBatch, type Store, type StoreContents, StoreError } from '@flowing/core'
import type pg from 'pg'
import { batchParams } from './internal/batch.js'
import { run } from './internal/db.js'
import { isConnectionLoss, isIdempotencyConflict, storeFailure } from './internal/failure.js'
import type { Lease, LeaseState } from './internal/lease.js'
import { Listener } from './internal/listener.js'
import { type Opened, openStore } from './internal/open.js'
import { channelOf, takeOver } from './internal/takeover.js'
import { Ticker } from './internal/ticker.js'
import { Wake } from './internal/wake.js'
import { type PostgresStoreOptions, type ResolvedPostgresOptions, resolveOptions } from './options.js'

// Expired keys are deleted at open and then at most this often (one bounded DELETE on an index).
const PRUNE_EVERY_MS = 60_000
// How many times a commit is sent when it meets idempotency keys being written elsewhere.
const MAX_SENDS = 4

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
 * store takes over the rows of every owner whose lease expired or who holds none (a closed store), in
 * one transaction under the journal's advisory lock: no row is taken by two stores.
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
  readonly #wallNow: () => number
  readonly #ticker: Ticker
  // Takeovers on demand: a notification of the journal's channel, a (re)connection of the listener.
  readonly #wake: Wake
  #listener: Listener | undefined
  // A notification came before the loop watched: the takeover it asked for is due at watch().
  #missed = false
  // What the store held at open, kept for recovered(): the loop reads it once, at start().
  readonly #contents: StoreContents
  #adopt: ((contents: StoreContents) => void) | undefined
  #closed: Promise<void> | undefined
  #commits = 0
  #adopted = 0
  #lastPrune: number
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
    this.#wallNow = options.wallNow
    this.#lastPrune = options.wallNow()
    this.#wake = new Wake(() => this.#wakeUp())
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
    if (o.listen) await store.#startListening()
    return store
  }

  // The LISTEN connection is made at open, not when the loop starts (where its cost would delay the
  // loop's first commits); its first attempt is awaited. Its failures are not background errors: it is
  // tried again, `listening` says whether it is up, and the renewals take enqueued messages meanwhile.
  async #startListening(): Promise<void> {
    this.#listener = new Listener(this.#pool, channelOf(this.schema, this.journal), () => {
      if (this.#adopt === undefined) this.#missed = true
      else this.#wake.poke()
    })
    await this.#listener.ready
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
    return this.#listener?.listening === true
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
    const held = await this.#send([...this.#lease.params, ...params])
    if (held !== 1) {
      await this.#lease.fence(this.#pool)
      throw new StoreError(this.name, 'lease', this.#lease.lost ?? 'the lease is lost')
    }
    this.#commits++
  }

  // The commit statement; sent a second time if the connection was lost (a pooled connection the server
  // dropped): a batch applied twice leaves the rows as applied once (upserts of the same bodies, deletes
  // of gone rows, the lease extended again), so the retry is safe even if the first one got through.
  // Sent again too (a few times) when it met an idempotency key another transaction was writing: it
  // wrote nothing, and the next one sees that row.
  async #send(values: unknown[]): Promise<number | undefined> {
    const commit = this.#parts.sql.commit
    for (let attempt = 1; ; attempt++) {
      try {
        return (await run<{ held: number }>(this.#pool, commit, values)).rows[0]?.held
      } catch (error) {
        const again = attempt === 1 ? isConnectionLoss(error) : false
        if (!(again || (attempt < MAX_SENDS && isIdempotencyConflict(error)))) {
          throw storeFailure(this.name, 'commit', error)
        }
      }
    }
  }

  /**
   * Hands the rows this store takes over while running (from processes whose lease expired, and
   * messages enqueued by {@link Enqueuer.enqueue}) to `adopt`; the loop calls it once, at `start()`.
   * From then on the store takes over at every renewal and — unless the `listen` option is false — as
   * soon as an enqueue's transaction commits. Without it the store takes over only at open.
   */
  watch(adopt: (contents: StoreContents) => void): void {
    this.#adopt = adopt
    if (this.#missed) this.#wake.poke()
    this.#missed = false
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
    await this.#listener?.stop()
    await this.#wake.idle()
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
      const now = this.#wallNow()
      if (now - this.#lastPrune >= PRUNE_EVERY_MS) {
        await run(this.#pool, this.#parts.sql.pruneKeys, [this.journal, now])
        this.#lastPrune = now
      }
      // A renewal that works clears a renewal's failure; a refused takeover stays until one is taken.
      if (this.#backgroundError?.operation !== 'recover') this.#backgroundError = undefined
    } catch (error) {
      this.#backgroundError = storeFailure(this.name, 'lease', error, 'a background renewal failed')
    }
  }

  // A takeover woken by a notification, on the LISTEN connection: it waits for another store's takeover
  // to end rather than give up (that one may have started before the enqueue committed, and so not see
  // its rows).
  async #wakeUp(): Promise<void> {
    const adopt = this.#adopt
    const client = this.#listener?.client
    if (adopt === undefined || client === undefined || this.#lease.lost !== undefined || this.#closed !== undefined)
      return
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
