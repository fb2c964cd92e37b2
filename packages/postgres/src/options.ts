/**
 * The options of {@link postgresStore}, and their one validator: every rule is checked before a
 * connection is made, so a typo or a wrong type is an `InvalidArgumentError` naming the option, never
 * a half-open store.
 *
 * @module
 */

import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import { InvalidArgumentError } from '@flowing/core'
import { argumentChecks } from '@flowing/errors'
import type pg from 'pg'

/**
 * The options of {@link postgresStore}.
 *
 * @group Store
 */
export interface PostgresStoreOptions {
  /**
   * Where the database is, as a `postgres://` URL; the store creates its own pool (and ends it at
   * `close()`). Give this or {@link PostgresStoreOptions.pool}, not both; with neither, the pool reads
   * the `PG*` environment variables (`PGHOST`, `PGDATABASE` …).
   *
   * @example `'postgres://app@db.internal:5432/orders'`
   */
  readonly connectionString?: string | undefined
  /**
   * Your own pool (its size, TLS, timeouts are yours). The store never ends it; give it an `'error'`
   * listener, as `pg` asks of every pool, or an idle connection the server drops ends the process.
   */
  readonly pool?: pg.Pool | undefined
  /**
   * The PostgreSQL schema that holds the tables, created if missing: a plain identifier (letters,
   * digits, `_`, `$`; not starting with a digit; ≤ 63 characters).
   *
   * @defaultValue 'flowing'
   */
  readonly schema?: string | undefined
  /**
   * The journal's name: several loops or apps share one database (and one schema) with separate
   * journals; processes that give the same name share one journal, each owning the messages it
   * journaled. Any non-empty string of at most 200 characters.
   *
   * @defaultValue 'default'
   */
  readonly journal?: string | undefined
  /**
   * This process's id in the journal: the owner of the rows it writes and of its lease. Unique among
   * the live processes sharing a journal. A stable id (a pod name) lets a restarted process recover
   * its own rows at once, without waiting for its old lease to expire; the default is new on every
   * start. Any non-empty string of at most 200 characters.
   *
   * @defaultValue `${hostname}:${pid}:${random}`
   */
  readonly owner?: string | undefined
  /**
   * How long the lease lasts without a renewal, in ms (an integer ≥ 10), by the database server's
   * clock: once it has passed, another process may take this one's messages over, and this store may
   * not write any more.
   *
   * @defaultValue 15000
   */
  readonly leaseMs?: number | undefined
  /**
   * How often the lease is renewed (and, for a loop that watches, dead processes' rows taken over), in
   * ms: an integer ≥ 1 and below `leaseMs`. Every commit renews it too.
   *
   * @defaultValue leaseMs / 3, rounded down
   */
  readonly renewEveryMs?: number | undefined
  /**
   * Whether a loop that watches the journal (every loop, from `start()`) keeps one connection of the
   * pool LISTENing for messages enqueued with {@link Enqueuer.enqueue}, and takes them over as soon as
   * their transaction commits. Without it (a pooler in transaction mode, such as PgBouncer's, cannot
   * LISTEN) enqueued messages are taken over at the next renewal, every `renewEveryMs`.
   *
   * @defaultValue true
   */
  readonly listen?: boolean | undefined
  /**
   * The wall clock that says which finished idempotency keys have expired, in ms since the Unix epoch
   * (tests pass a fake one).
   *
   * @defaultValue Date.now
   */
  readonly wallNow?: (() => number) | undefined
}

/** {@link PostgresStoreOptions} with every default applied. */
export interface ResolvedPostgresOptions {
  readonly connectionString: string | undefined
  readonly pool: pg.Pool | undefined
  readonly schema: string
  readonly journal: string
  readonly owner: string
  readonly leaseMs: number
  readonly renewEveryMs: number
  readonly listen: boolean
  readonly wallNow: () => number
}

const KNOWN = [
  'connectionString',
  'pool',
  'schema',
  'journal',
  'owner',
  'leaseMs',
  'renewEveryMs',
  'listen',
  'wallNow',
] as const
const check = argumentChecks(InvalidArgumentError)
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/
const MIN_LEASE_MS = 10
const MAX_NAME = 200
// NUL, or a surrogate without its pair: what a UTF-8 text column cannot hold.
const UNSTORABLE = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/**
 * Checks `options` and applies the defaults.
 *
 * @throws InvalidArgumentError naming the first option that breaks its rule (an unknown key included,
 *   with a suggestion for a near miss such as `leaseMS`)
 */
export function resolveOptions(options: unknown): ResolvedPostgresOptions {
  if (options === undefined) options = {}
  const o: Partial<Record<(typeof KNOWN)[number], unknown>> = check.plainObject('options', options)
  check.knownKeys('options', o, KNOWN)
  if (o.connectionString !== undefined && o.pool !== undefined) {
    throw new InvalidArgumentError('options.pool', 'absent when `connectionString` is given (one or the other)', o.pool)
  }
  const leaseMs = integer('options.leaseMs', o.leaseMs, MIN_LEASE_MS, 15_000)
  const renewEveryMs = integer('options.renewEveryMs', o.renewEveryMs, 1, Math.max(1, Math.floor(leaseMs / 3)))
  if (renewEveryMs >= leaseMs) {
    throw new InvalidArgumentError('options.renewEveryMs', `below \`leaseMs\` (${leaseMs})`, renewEveryMs)
  }
  return {
    connectionString: connectionString(o.connectionString),
    pool: pool(o.pool),
    schema: checkSchema(o.schema),
    journal: checkName('options.journal', o.journal) ?? 'default',
    owner: checkName('options.owner', o.owner) ?? defaultOwner(),
    leaseMs,
    renewEveryMs,
    listen: o.listen === undefined ? true : check.boolean('options.listen', o.listen),
    wallNow: wallNow(o.wallNow),
  }
}

function connectionString(value: unknown): string | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'string' || value.trim() === '') {
    throw new InvalidArgumentError('options.connectionString', 'a non-empty string (a postgres:// URL)', value)
  }
  return value
}

function pool(value: unknown): pg.Pool | undefined {
  if (value === undefined) return undefined
  const p = value as { query?: unknown; connect?: unknown }
  if (value === null || typeof value !== 'object' || typeof p.query !== 'function' || typeof p.connect !== 'function') {
    throw new InvalidArgumentError('options.pool', 'a pg.Pool (with query() and connect())', value)
  }
  return value as pg.Pool
}

/**
 * `options.schema`: a plain identifier, or `flowing` when absent.
 * @throws InvalidArgumentError for anything else
 */
export function checkSchema(value: unknown): string {
  if (value === undefined) return 'flowing'
  if (typeof value !== 'string' || !IDENTIFIER.test(value)) {
    throw new InvalidArgumentError(
      'options.schema',
      'a plain identifier (letters, digits, `_`, `$`; not starting with a digit; at most 63 characters)',
      value,
    )
  }
  return value
}

/**
 * A journal's or an owner's name: a non-empty string of at most 200 characters that a text column can
 * hold, or `undefined` when absent.
 * @throws InvalidArgumentError naming `option` for anything else
 */
export function checkName(option: string, value: unknown): string | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'string' || value === '' || value.length > MAX_NAME || UNSTORABLE.test(value)) {
    const rule = `a non-empty string of at most ${MAX_NAME} characters (no NUL, no unpaired surrogate)`
    throw new InvalidArgumentError(option, rule, value)
  }
  return value
}

function integer(option: string, value: unknown, min: number, fallback: number): number {
  return value === undefined ? fallback : check.integer(option, value, { min })
}

function wallNow(value: unknown): () => number {
  return value === undefined ? Date.now : check.fn<() => number>('options.wallNow', value)
}

function defaultOwner(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`
}
