/**
 * One statement over many rows: `DELETE … WHERE id IN (?, …)` or `INSERT … VALUES (…), (…) ON
 * CONFLICT …`, run on up to {@link ROWS_PER_STATEMENT} rows at a time, so a batch of 1,000 removals is
 * 8 statement runs instead of 1,000 (each run is a crossing into SQLite, a bind and a reset). A
 * remainder runs in power-of-two slices (64, 32, … 1), so at most eight statements exist per kind
 * and each is prepared once, when first needed.
 *
 * @internal
 * @module
 */
import type Database from 'better-sqlite3'

/** Rows one run takes at most (× 5 values for a message row: 640 bound parameters). */
export const ROWS_PER_STATEMENT = 128

/** The SQL of one statement over `rows` rows. */
export type MultiRowSql = (rows: number) => string

/** A statement kind run over a flat list of values, `width` values a row, in row order. */
export class MultiRow {
  readonly #db: Database.Database
  readonly #sql: MultiRowSql
  readonly #width: number
  readonly #prepared = new Map<number, Database.Statement<unknown[]>>()

  /**
   * @param db - the connection
   * @param sql - the SQL for a given number of rows
   * @param width - values a row
   */
  constructor(db: Database.Database, sql: MultiRowSql, width: number) {
    this.#db = db
    this.#sql = sql
    this.#width = width
  }

  /** Runs the statement over every row of `values` (flat: `width` values a row), in order. */
  run(values: readonly unknown[]): void {
    const width = this.#width
    const rows = values.length / width
    for (let at = 0; at < rows; ) {
      const n = sliceOf(rows - at)
      this.#statement(n).run(values.length === n * width ? values : values.slice(at * width, (at + n) * width))
      at += n
    }
  }

  #statement(rows: number): Database.Statement<unknown[]> {
    let statement = this.#prepared.get(rows)
    if (statement === undefined) {
      statement = this.#db.prepare(this.#sql(rows))
      this.#prepared.set(rows, statement)
    }
    return statement
  }
}

// Rows of the next run: the most a statement takes, else the largest power of two left.
function sliceOf(left: number): number {
  if (left >= ROWS_PER_STATEMENT) return ROWS_PER_STATEMENT
  return 2 ** Math.floor(Math.log2(left))
}

/** `(?, ?, …)` repeated `rows` times, `width` marks each, comma-separated. */
export function placeholders(rows: number, width: number): string {
  const row = `(${Array.from({ length: width }, () => '?').join(', ')})`
  return Array.from({ length: rows }, () => row).join(', ')
}
