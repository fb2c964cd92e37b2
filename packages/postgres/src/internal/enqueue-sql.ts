/**
 * The statements of `enqueue()`, sent on the caller's connection inside the caller's transaction. None
 * of them can fail on the data it is given (no JSON is read by the server, names are checked with
 * `to_regclass` before a table is named), so a refusal never aborts the caller's transaction.
 *
 * @module
 */
import { quote, type Statement, statement } from './sql.js'

/** The statements of one schema. */
export interface EnqueueStatements {
  /** `$1`, `$2`: the `meta` and `journals` tables' names; their regclass or null (never fails). */
  readonly tables: Statement
  /** `$1` the journal: the schema's version, whether the journal is known, and the known ones. */
  readonly journals: Statement
  /** The insert and its notification: see {@link enqueueText}. */
  readonly insert: Statement
  /**
   * `$1` journal, `$2` id, `$3` idempotency key, `$4` now (ms): removes the message just inserted if
   * its key has finished since the insert's snapshot was taken, and returns that key's record.
   */
  readonly recheck: Statement
}

/** The statements over `schema` (a validated identifier). */
export function enqueueStatements(schema: string): EnqueueStatements {
  const s = quote(schema)
  return {
    tables: statement('SELECT to_regclass($1)::text AS meta, to_regclass($2)::text AS journals'),
    journals: statement(
      `SELECT (SELECT value FROM ${s}.meta WHERE key = 'version') AS version,
         EXISTS (SELECT FROM ${s}.journals WHERE journal = $1) AS known,
         ARRAY(SELECT journal FROM ${s}.journals ORDER BY journal LIMIT 100) AS journals`,
    ),
    insert: statement(enqueueText(s)),
    recheck: statement(
      `WITH finished AS (${finishedKey(s, '$3', '$4')}),
       gone AS (DELETE FROM ${s}.messages WHERE journal = $1 AND id = $2 AND EXISTS (SELECT FROM finished) RETURNING 1)
       SELECT (SELECT body FROM finished) AS finished, (SELECT count(*) FROM gone)::int AS gone`,
    ),
  }
}

// $1 journal, $2 id, $3 the record (JSON text), $4 its idempotency key (the `keys.key` form) or null,
// $5 now (ms since the epoch, for the finished keys' expiry), $6 the journal's channel.
// The row goes in with the owner '' — an owner no store can have (an owner is a non-empty string) and
// so one without a lease: the takeover of any watching store of the journal takes it. It is not written
// when its key has finished (a live row in `keys`) or is in flight (the unique index over `idem_key`:
// a row another transaction is inserting with the same key makes this one wait for that transaction,
// then write nothing if it committed). The notification is sent only if the row was written, and the
// server delivers it only when the caller's transaction commits.
function enqueueText(s: string): string {
  return `WITH finished AS (${finishedKey(s, '$4::text', '$5')}),
put AS (
  INSERT INTO ${s}.messages (journal, id, owner, body, idem_key)
  SELECT $1, $2, '', $3::json, $4::text WHERE NOT EXISTS (SELECT FROM finished)
  ON CONFLICT (journal, idem_key) WHERE idem_key IS NOT NULL DO NOTHING
  RETURNING 1
)
SELECT EXISTS (SELECT FROM put) AS put, (SELECT body FROM finished) AS finished,
  CASE WHEN EXISTS (SELECT FROM put) THEN pg_notify($6, '') END AS notified`
}

// The record of a finished key that has not expired, as text (never parsed by the server).
function finishedKey(s: string, key: string, now: string): string {
  return `SELECT body::text AS body FROM ${s}.keys
    WHERE journal = $1 AND key = ${key} AND expires_at > to_timestamp(${now} / 1000.0)`
}
