/**
 * Every SQL text the store sends, built once per schema. Each is one statement with positional
 * parameters; the small ones go as named prepared statements (planned once per connection), the
 * commit and the takeover unnamed (planned at each run, for the rows the journal holds then).
 *
 * Parameters shared by all: `$1` the journal, `$2` the owner, `$3` the lease token (where the lease is
 * checked), `$4` the lease length in ms (where it is extended).
 *
 * @module
 */
import { createHash } from 'node:crypto'

/** One statement: its text, and the prepared-statement name derived from it if it is prepared. */
export interface Statement {
  readonly name: string | undefined
  readonly text: string
}

/** The statements of one schema. */
export interface Statements {
  /** The schema, quoted. */
  readonly schema: string
  readonly readVersion: Statement
  readonly acquire: Statement
  readonly renew: Statement
  readonly release: Statement
  readonly lockJournal: Statement
  readonly tryLockJournal: Statement
  readonly takeOver: Statement
  readonly commit: Statement
  readonly ownMessages: Statement
  readonly deadLetters: Statement
  readonly liveKeys: Statement
  readonly pruneKeys: Statement
  readonly registerJournal: Statement
}

/** The schema version these statements expect (the `meta` table's `version` row). */
export const SCHEMA_VERSION = '2'

/** The unique index over the idempotency keys of the messages in flight (a commit may meet it). */
export const IDEMPOTENCY_INDEX = 'messages_by_idempotency_key'

/** How many expired keys one pruning deletes at most (a bounded, cheap statement). */
export const PRUNE_LIMIT = 10_000

const LEASE_LIVE = 'journal = $1 AND owner = $2 AND token = $3 AND expires_at > now()'
const EXTEND = "expires_at = now() + $4 * interval '1 millisecond'"
// Data-modifying CTEs run whether or not they are read; this guard (an InitPlan, evaluated before any
// row is touched) makes each of them write nothing unless the lease check found the lease.
const HELD = 'EXISTS (SELECT FROM lease)'

/**
 * The DDL of schema version 1, as version 1 of the package ran it: idempotent (`IF NOT EXISTS`
 * throughout). A new schema is made by it and then upgraded ({@link upgradeDdl}).
 */
export function schemaDdl(schema: string): string {
  const s = quote(schema)
  return `
CREATE SCHEMA IF NOT EXISTS ${s};
CREATE TABLE IF NOT EXISTS ${s}.meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS ${s}.messages (
  journal text NOT NULL,
  id text NOT NULL,
  seq bigserial NOT NULL,
  owner text NOT NULL,
  body json NOT NULL,
  PRIMARY KEY (journal, id)
);
CREATE INDEX IF NOT EXISTS messages_by_owner ON ${s}.messages (journal, owner, seq);
CREATE TABLE IF NOT EXISTS ${s}.dead_letters (
  journal text NOT NULL,
  id text NOT NULL,
  seq bigserial NOT NULL,
  body json NOT NULL,
  PRIMARY KEY (journal, id)
);
CREATE INDEX IF NOT EXISTS dead_letters_by_seq ON ${s}.dead_letters (journal, seq);
CREATE TABLE IF NOT EXISTS ${s}.keys (
  journal text NOT NULL,
  key text NOT NULL,
  expires_at timestamptz NOT NULL,
  body json NOT NULL,
  PRIMARY KEY (journal, key)
);
CREATE INDEX IF NOT EXISTS keys_by_expiry ON ${s}.keys (journal, expires_at);
CREATE SEQUENCE IF NOT EXISTS ${s}.lease_tokens;
CREATE TABLE IF NOT EXISTS ${s}.leases (
  journal text NOT NULL,
  owner text NOT NULL,
  token bigint NOT NULL,
  acquired_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (journal, owner)
);
INSERT INTO ${s}.meta (key, value) VALUES ('version', '1') ON CONFLICT (key) DO NOTHING;
`
}

/**
 * Version 1 to version 2, idempotent: the idempotency key of each message in a column of its own,
 * unique per journal among the rows that have one (what makes a duplicate enqueue a fact of the
 * database); the journals stores have opened (so an enqueue to a misspelled journal is refused). Rows
 * journaled before the upgrade keep a null key column.
 */
export function upgradeDdl(schema: string): string {
  const s = quote(schema)
  return `
ALTER TABLE ${s}.messages ADD COLUMN IF NOT EXISTS idem_key text;
CREATE UNIQUE INDEX IF NOT EXISTS ${IDEMPOTENCY_INDEX} ON ${s}.messages (journal, idem_key) WHERE idem_key IS NOT NULL;
CREATE TABLE IF NOT EXISTS ${s}.journals (journal text PRIMARY KEY, opened_at timestamptz NOT NULL DEFAULT now());
INSERT INTO ${s}.journals (journal) SELECT journal FROM ${s}.leases UNION SELECT journal FROM ${s}.messages
  ON CONFLICT (journal) DO NOTHING;
UPDATE ${s}.meta SET value = '${SCHEMA_VERSION}' WHERE key = 'version' AND value = '1';
`
}

/** The statements over `schema` (a validated identifier). */
export function statements(schema: string): Statements {
  const s = quote(schema)
  return {
    schema: s,
    readVersion: statement(`SELECT value FROM ${s}.meta WHERE key = 'version'`),
    acquire: statement(
      `INSERT INTO ${s}.leases (journal, owner, token, expires_at)
       VALUES ($1, $2, nextval('${s}.lease_tokens'), now() + $3 * interval '1 millisecond')
       ON CONFLICT (journal, owner) DO UPDATE
         SET token = excluded.token, acquired_at = now(), expires_at = excluded.expires_at
       RETURNING token::text AS token`,
    ),
    renew: statement(`UPDATE ${s}.leases SET ${EXTEND} WHERE ${LEASE_LIVE} RETURNING token`),
    release: statement(`DELETE FROM ${s}.leases WHERE journal = $1 AND owner = $2 AND token = $3`),
    lockJournal: statement('SELECT pg_advisory_xact_lock(hashtext($1))'),
    tryLockJournal: statement('SELECT pg_try_advisory_xact_lock(hashtext($1)) AS locked'),
    // Planned at each run with its parameters, not prepared: what they do depends on how many rows
    // the journal holds now, and a plan cached while it held few would scan it whole.
    takeOver: { name: undefined, text: takeOverText(s) },
    commit: { name: undefined, text: commitText(s) },
    ownMessages: statement(`SELECT body FROM ${s}.messages WHERE journal = $1 AND owner = $2 ORDER BY seq`),
    deadLetters: statement(`SELECT body FROM ${s}.dead_letters WHERE journal = $1 ORDER BY seq`),
    liveKeys: statement(`SELECT body FROM ${s}.keys WHERE journal = $1 AND expires_at > to_timestamp($2 / 1000.0)`),
    pruneKeys: statement(
      `DELETE FROM ${s}.keys WHERE ctid IN (
         SELECT ctid FROM ${s}.keys WHERE journal = $1 AND expires_at <= to_timestamp($2 / 1000.0) LIMIT ${PRUNE_LIMIT})`,
    ),
    registerJournal: statement(`INSERT INTO ${s}.journals (journal) VALUES ($1) ON CONFLICT (journal) DO NOTHING`),
  }
}

// Run under the journal's advisory lock, after this owner's lease was renewed in the same transaction.
// The expired leases are deleted, which locks them: a commit of their owner that is checking its lease
// at this moment either renewed it first (the row no longer matches `expires_at <= now()` on recheck)
// or finds it gone. Owners with rows but no lease row at all (closed stores) are found by a loose scan
// of the owner index — one probe per distinct owner, not one per row — so a takeover that finds nobody
// dead costs O(owners), however many rows the live owners hold; the rows taken are found by the owner
// index (`= ANY` of an array the planner evaluates first, rather than a join it may plan as a scan).
function takeOverText(s: string): string {
  return `WITH RECURSIVE owners(owner) AS (
  (SELECT owner FROM ${s}.messages WHERE journal = $1 ORDER BY owner LIMIT 1)
  UNION ALL
  SELECT (SELECT m.owner FROM ${s}.messages m WHERE m.journal = $1 AND m.owner > o.owner ORDER BY m.owner LIMIT 1)
  FROM owners o WHERE o.owner IS NOT NULL
), dead AS (
  DELETE FROM ${s}.leases WHERE journal = $1 AND owner <> $2 AND expires_at <= now() RETURNING owner
), gone AS (
  SELECT owner FROM dead
  UNION
  SELECT o.owner FROM owners o
  WHERE o.owner IS NOT NULL AND o.owner <> $2
    AND NOT EXISTS (SELECT FROM ${s}.leases l WHERE l.journal = $1 AND l.owner = o.owner)
), taken AS (
  UPDATE ${s}.messages m SET owner = $2 WHERE m.journal = $1 AND m.owner = ANY(ARRAY(SELECT owner FROM gone))
  RETURNING m.seq, m.body
)
SELECT body FROM taken ORDER BY seq`
}

// One statement, so one round trip and its own transaction: the lease check first, then every table.
// The rows written come as JSON arrays, parsed once by the server (far cheaper for the client than
// `text[]` parameters, whose every element the driver escapes); ids and bodies in separate arrays
// zipped by ROWS FROM, because reading a field out of a body (->>) would unescape all of it and fail on
// a \u0000 in a payload, where json_array_elements keeps each body's text as it is. The ids removed come
// as `text[]`: the statement is unnamed, so planned at each commit with its parameters — the array's
// length known, a large one matched by hashing — never with a generic plan made while the table was
// small (which filtered a scan with the array, one linear search per row: 100k removals took 84 s).
// $5 removed ids; $6, $7 ids and records; $8 letters removed; $9, $10 their ids and letters;
// $11 keys removed; $12, $13, $14 keys, expiries (ms since the epoch, null for never) and records;
// $15 the messages' idempotency keys (their `keys.key` form, null for none), beside $6 and $7.
// A message's key goes into the unique `idem_key` column unless another row of the journal (not one
// this batch removes) holds it already: a commit never fails on it (the loop accepted the message
// before the commit; two loops may each have accepted one) — the column is what enqueue() checks.
// `removed_first` makes the deletes run before the inserts (an adopted message is removed under its old
// id and written under a new one with the same key, in the same batch).
// The owner test of the delete is written `(owner = $2) IS TRUE` so that it is a filter, never an index
// condition: the primary key finds the removed rows, where the owner index would make the planner (on
// a table not analyzed yet) scan every row of the owner, live and dead — 30 ms a batch at 35k rows
// instead of 0.1.
function commitText(s: string): string {
  const rows = (...params: string[]) =>
    `ROWS FROM (json_array_elements_text(${params[0]}::json), ${params
      .slice(1)
      .map((p) => `json_array_elements(${p}::json)`)
      .join(', ')}) WITH ORDINALITY`
  return `WITH lease AS (
  UPDATE ${s}.leases SET ${EXTEND} WHERE ${LEASE_LIVE} RETURNING token
), gone AS (
  DELETE FROM ${s}.messages WHERE journal = $1 AND id = ANY($5::text[]) AND (owner = $2) IS TRUE AND ${HELD}
  RETURNING id
), put AS (
  INSERT INTO ${s}.messages (journal, id, owner, body, idem_key)
  SELECT $1, r.id, $2, r.body, ${idempotencyKeyOf('r', s)}
  FROM ${rows('$6', '$7')} AS r(id, body, n)
  JOIN json_array_elements_text($15::json) WITH ORDINALITY AS k(key, n) ON k.n = r.n
  CROSS JOIN (SELECT count(*) FROM gone) AS removed_first
  WHERE ${HELD} ORDER BY r.n
  ON CONFLICT (journal, id) DO UPDATE SET owner = excluded.owner, body = excluded.body, idem_key = excluded.idem_key
), letters_gone AS (
  DELETE FROM ${s}.dead_letters WHERE journal = $1 AND id = ANY($8::text[]) AND ${HELD}
), letters_put AS (
  INSERT INTO ${s}.dead_letters (journal, id, body)
  SELECT $1, r.id, r.body FROM ${rows('$9', '$10')} AS r(id, body, n)
  WHERE ${HELD} ORDER BY r.n
  ON CONFLICT (journal, id) DO UPDATE SET body = excluded.body
), keys_gone AS (
  DELETE FROM ${s}.keys WHERE journal = $1 AND key = ANY($11::text[]) AND ${HELD}
), keys_put AS (
  INSERT INTO ${s}.keys (journal, key, expires_at, body)
  SELECT $1, r.key, to_timestamp(COALESCE(r.ms::text::float8 / 1000, 'infinity')), r.body
  FROM ${rows('$12', '$13', '$14')} AS r(key, ms, body, n)
  WHERE ${HELD}
  ON CONFLICT (journal, key) DO UPDATE SET expires_at = excluded.expires_at, body = excluded.body
)
SELECT count(*)::int AS held FROM lease`
}

// The `idem_key` a written row takes: its key, unless another row still holds it.
function idempotencyKeyOf(r: string, s: string): string {
  return `CASE WHEN k.key IS NULL OR EXISTS (
    SELECT FROM ${s}.messages x
    WHERE x.journal = $1 AND x.idem_key = k.key AND x.id <> ${r}.id AND x.id <> ALL($5::text[])
  ) THEN NULL ELSE k.key END`
}

/** A named prepared statement of `text` (its name derived from the text). */
export function statement(text: string): Statement {
  const hash = createHash('sha256').update(text).digest('hex').slice(0, 16)
  return { name: `flowing_${hash}`, text }
}

/** `name` as a quoted identifier. */
export function quote(name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}
