/**
 * Transactional enqueue: a message written by the application's own transaction, on its own
 * connection — it exists if that transaction commits, and never did if it rolls back. A loop of the
 * journal takes it over and runs it as a posted one.
 *
 * @module
 */
import { DuplicateMessageError, InvalidArgumentError, type MessageMap, StoreError } from '@flowing/core'
import { argumentChecks, closestName } from '@flowing/errors'
import type pg from 'pg'
import { type EnqueueOptions, type EnqueueRow, enqueueRow } from './internal/enqueue-record.js'
import { type EnqueueStatements, enqueueStatements } from './internal/enqueue-sql.js'
import { describe } from './internal/failure.js'
import { SCHEMA_VERSION } from './internal/sql.js'
import { channelOf } from './internal/takeover.js'
import { checkName, checkSchema } from './options.js'

export type { EnqueueOptions } from './internal/enqueue-record.js'

/**
 * Options of {@link createEnqueuer}.
 *
 * @typeParam M - the loop's message map
 * @group Enqueue
 */
export interface EnqueuerOptions<M extends MessageMap> {
  /**
   * The message types the journal's loops handle: an enqueue of any other type is refused (a loop
   * cannot take a message whose type it has no handler for).
   */
  readonly types: readonly (keyof M & string)[]
  /**
   * The journal, as its stores were opened with it (`postgresStore({ journal })`). A store must have
   * opened it once: an enqueue to a journal no store ever opened is refused.
   *
   * @defaultValue 'default'
   */
  readonly journal?: string | undefined
  /**
   * The schema that holds the journal.
   *
   * @defaultValue 'flowing'
   */
  readonly schema?: string | undefined
}

/**
 * What an accepted enqueue wrote.
 *
 * @group Enqueue
 */
export interface Enqueued {
  /** The message's id in the journal (the loop that runs it gives it an id of its own). */
  readonly id: string
}

/** A `pg` client as far as enqueue uses it. */
type Client = Pick<pg.ClientBase, 'query' | 'getTransactionStatus'>
type TransactionStatus = ReturnType<Client['getTransactionStatus']>

const check = argumentChecks(InvalidArgumentError)
const KNOWN = ['types', 'journal', 'schema'] as const
// SQLSTATE in_failed_sql_transaction.
const IN_FAILED_TRANSACTION = '25P02'

/**
 * Writes messages into a journal from the application's own transactions. Make one per journal with
 * {@link createEnqueuer}, and share it.
 *
 * @remarks
 * **Atomic with your transaction.** {@link Enqueuer.enqueue} writes one row on your connection, in your
 * open transaction: it commits with your other writes or rolls back with them. At commit the server
 * delivers a notification to the journal's stores that LISTEN (one per running loop), and the first to
 * take the journal's advisory lock takes the row over and hands it to its loop — in milliseconds. A
 * store that missed the notification takes it at its next renewal (every `renewEveryMs`), and a store
 * opening takes it too: one loop runs it, once.
 *
 * **Refusals leave your transaction usable.** Every argument is checked before any SQL is sent, and no
 * statement it sends can fail on what it is given; a duplicate idempotency key is refused without an
 * error in the server. Your transaction can go on and commit its other work.
 *
 * @typeParam M - the loop's message map
 * @group Enqueue
 */
export class Enqueuer<M extends MessageMap> {
  /** The journal it writes to. */
  readonly journal: string
  /** The schema of that journal. */
  readonly schema: string
  /** The channel it notifies (and the journal's stores LISTEN on). */
  readonly channel: string
  readonly #types: readonly string[]
  readonly #sql: EnqueueStatements
  // Connections on which the schema and the journal were found right (a check per connection, once).
  readonly #checked = new WeakSet<object>()

  /** @internal Use {@link createEnqueuer}. */
  constructor(options: { types: readonly string[]; journal: string; schema: string }) {
    this.#types = options.types
    this.journal = options.journal
    this.schema = options.schema
    this.channel = channelOf(options.schema, options.journal)
    this.#sql = enqueueStatements(options.schema)
  }

  /**
   * Writes a message in `client`'s open transaction. If the transaction commits, a loop of the journal
   * runs it once, as if it had been posted with the same options (key order, priority, delay,
   * idempotency key, retry policy, deadline, group, headers); if it rolls back, it never existed.
   *
   * @param client - a `pg` `Client` or `PoolClient` inside a transaction (after `BEGIN`): a client in
   *   no transaction is refused, never written to in autocommit — the point of an enqueue is its
   *   transaction
   * @param type - one of the enqueuer's types
   * @param payload - the message's payload, JSON-serializable (written as JSON, read back by the loop
   *   with `JSON.parse`: a `Date` arrives as a string)
   * @param options - see {@link EnqueueOptions}
   * @returns the message's id in the journal
   * @throws InvalidArgumentError before anything is sent, for a client that is not a connected `pg`
   *   client in an open, healthy transaction, a type the enqueuer does not know, a payload JSON cannot
   *   write (a `BigInt`, a cycle), an option that breaks its rule or is unknown (with the nearest
   *   name); at the first enqueue on a connection, for a schema that holds no journal of this version
   *   or a journal no store has opened (the transaction stays usable)
   * @throws DuplicateMessageError when the idempotency key is in flight or finished (within its TTL) in
   *   the journal: nothing was written, the transaction stays usable
   * @throws StoreError (`commit`) when the server fails the statement (a closed connection, a lost one,
   *   a serialization failure under `REPEATABLE READ`): the transaction is then the server's to abort
   */
  async enqueue<T extends keyof M & string>(
    client: pg.ClientBase,
    type: T,
    payload: M[T],
    options?: EnqueueOptions,
  ): Promise<Enqueued> {
    const c = openTransaction(client)
    const row = enqueueRow(this.#types, type, payload, options, Date.now())
    const where = storeName(client, this)
    try {
      if (!this.#checked.has(client)) await this.#checkTarget(c)
      await this.#insert(c, row, type)
    } catch (error) {
      if (error instanceof InvalidArgumentError || error instanceof DuplicateMessageError) throw error
      // The status said 'T', but a statement had just failed (its ReadyForQuery not read yet).
      if ((error as { code?: unknown }).code === IN_FAILED_TRANSACTION) throw refusedClient(client, 'E')
      throw new StoreError(where, 'commit', `the enqueue failed: ${describe(error)}`, error)
    }
    return { id: row.id }
  }

  async #insert(c: Client, row: EnqueueRow, type: string): Promise<void> {
    const key = row.idempotencyKey
    const now = Date.now()
    const values = [this.journal, row.id, row.body, key?.column ?? null, now, this.channel]
    const sql = this.#sql.insert
    const put = await c.query<{ put: boolean; finished: string | null }>({ name: sql.name, text: sql.text, values })
    const result = put.rows[0]
    if (key === undefined) return
    if (result?.put !== true) throw duplicate(type, key.given, result?.finished ?? null)
    // Read committed: a finish committed while the insert waited on its key is visible now.
    const again = [this.journal, row.id, key.column, now]
    const recheck = this.#sql.recheck
    const late = await c.query<{ finished: string | null; gone: number }>({ ...recheck, values: again })
    if (late.rows[0]?.gone === 1) throw duplicate(type, key.given, late.rows[0].finished)
  }

  // The schema holds a journal of this version, and a store opened this journal in it: without that,
  // the message would wait for a loop that never comes. Reads only, none of which can fail on a name.
  async #checkTarget(c: Client): Promise<void> {
    const s = (table: string) => `"${this.schema}".${table}`
    const found = await c.query<{ meta: string | null; journals: string | null }>({
      ...this.#sql.tables,
      values: [s('meta'), s('journals')],
    })
    const tables = found.rows[0]
    if (tables?.meta == null) {
      throw new InvalidArgumentError(
        'options.schema',
        'a schema that holds a Flowing journal (open a store first)',
        this.schema,
      )
    }
    if (tables.journals == null) throw this.#oldSchema('1')
    const state = await c.query<{ version: string | null; known: boolean; journals: string[] }>({
      ...this.#sql.journals,
      values: [this.journal],
    })
    const info = state.rows[0]
    if (info?.version !== SCHEMA_VERSION) throw this.#oldSchema(info?.version ?? '(none)')
    if (!info.known) {
      const rule = `a journal a store has opened in schema "${this.schema}" (${info.journals.join(', ') || 'none yet'})`
      const near = closestName(this.journal, info.journals)
      const hint = near === undefined ? undefined : { hint: `did you mean \`${near}\`?` }
      throw new InvalidArgumentError('options.journal', rule, this.journal, hint)
    }
    this.#checked.add(c)
  }

  #oldSchema(version: string): InvalidArgumentError {
    const rule = `a schema of version ${SCHEMA_VERSION} (it has version ${version}: open a store of this @flowing/postgres on it once, which upgrades it)`
    return new InvalidArgumentError('options.schema', rule, this.schema)
  }
}

/**
 * Makes an enqueuer for one journal: checks its options (no connection is made; the schema and the
 * journal are checked at the first enqueue on each connection).
 *
 * @typeParam M - the loop's message map: `enqueue()` takes its types and their payloads
 * @throws InvalidArgumentError for an option that breaks its rule (an unknown one with the nearest name)
 *
 * @example
 * ```ts no-run
 * import pg from 'pg'
 * import { createEnqueuer } from '@flowing/postgres'
 *
 * type Messages = { 'email.send': { to: string } }
 * const enqueuer = createEnqueuer<Messages>({ journal: 'orders', types: ['email.send'] })
 *
 * const pool = new pg.Pool()
 * const client = await pool.connect()
 * try {
 *   await client.query('BEGIN')
 *   await client.query('INSERT INTO users (email) VALUES ($1)', ['ada@example.com'])
 *   await enqueuer.enqueue(client, 'email.send', { to: 'ada@example.com' }, { idempotencyKey: 'welcome:ada' })
 *   await client.query('COMMIT') // the email is sent if, and only if, the user was created
 * } catch (error) {
 *   await client.query('ROLLBACK')
 *   throw error
 * } finally {
 *   client.release()
 * }
 * ```
 *
 * @group Enqueue
 */
export function createEnqueuer<M extends MessageMap>(options: EnqueuerOptions<M>): Enqueuer<M> {
  const o: Partial<Record<(typeof KNOWN)[number], unknown>> = check.snapshot('options', options)
  check.knownKeys('options', o, KNOWN)
  return new Enqueuer<M>({
    types: types(o.types),
    journal: checkName('options.journal', o.journal) ?? 'default',
    schema: checkSchema(o.schema),
  })
}

function types(value: unknown): readonly string[] {
  const rule = 'a non-empty array of message types (non-empty strings)'
  if (!Array.isArray(value) || value.length === 0) throw new InvalidArgumentError('options.types', rule, value)
  for (const [i, t] of value.entries()) {
    if (typeof t !== 'string' || t === '')
      throw new InvalidArgumentError(`options.types[${i}]`, 'a non-empty string', t)
  }
  return Object.freeze([...(value as string[])])
}

// The client, if it is a connected pg client inside an open transaction that has not failed.
function openTransaction(client: unknown): Client {
  const c = client as Partial<Client> | null
  if (typeof c?.query !== 'function' || typeof c.getTransactionStatus !== 'function') {
    const rule = 'a pg Client or PoolClient (pg ≥ 8.23; not a Pool, whose queries run outside your transaction)'
    throw new InvalidArgumentError('client', rule, client)
  }
  const status = c.getTransactionStatus()
  if (status === 'T') return c as Client
  throw refusedClient(client, status)
}

function refusedClient(client: unknown, status: TransactionStatus): InvalidArgumentError {
  const rule =
    status === 'E'
      ? 'a client whose transaction has not failed (this one is aborted: ROLLBACK it)'
      : 'a connected client inside an open transaction (send BEGIN first: the message commits with your transaction)'
  return new InvalidArgumentError('client', rule, client, {
    hint: `its transaction status is ${JSON.stringify(status)}`,
  })
}

function duplicate(type: string, key: string, finished: string | null): DuplicateMessageError {
  let state = 'processing'
  if (finished !== null) {
    const entry = (JSON.parse(finished) as { entry?: { state?: unknown } }).entry
    state = typeof entry?.state === 'string' ? entry.state : 'done'
  }
  return new DuplicateMessageError(type, key, state)
}

// `postgres:host:port/database#schema.journal`, as a store on the same database names itself.
function storeName(client: pg.ClientBase, e: { schema: string; journal: string }): string {
  const { host, port, database } = client as Partial<Record<'host' | 'port' | 'database', unknown>>
  return `postgres:${String(host ?? 'localhost')}:${String(port ?? 5432)}/${String(database ?? '')}#${e.schema}.${e.journal}`
}
