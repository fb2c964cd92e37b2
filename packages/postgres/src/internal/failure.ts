/**
 * What a failed call to the server means, in words an operator can act on: the `StoreError`s of the
 * store, with the driver's error as their `cause`.
 *
 * @module
 */
import { StoreError, type StoreOperation } from '@flowing/core'
import { IDEMPOTENCY_INDEX } from './sql.js'

// SQLSTATE classes and codes worth a sentence (https://www.postgresql.org/docs/current/errcodes-appendix.html).
const CODES: Readonly<Record<string, string>> = {
  '08000': 'the connection failed',
  '08001': 'the server refused the connection',
  '08003': 'the connection is gone',
  '08006': 'the connection failed',
  '28000': 'the server refused the credentials',
  '28P01': 'the password was refused',
  '3D000': 'the database does not exist',
  '42501': 'the role lacks a privilege it needs (CREATE on the database for the schema, or on the tables)',
  '53100': 'the server is out of disk space',
  '53200': 'the server is out of memory',
  '53300': 'the server has too many connections',
  '57014': 'the statement was cancelled (statement_timeout or a cancel request)',
  '57P01': 'the server is shutting down',
  '57P02': 'the server crashed',
  '57P03': 'the server is not accepting connections yet (starting up or in recovery)',
  '25006': 'the server is read-only (a standby, or default_transaction_read_only)',
  '40001': 'a serialization failure',
  '40P01': 'a deadlock (the server aborted this transaction)',
}

const NODE_CODES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'the server refused the connection (is it running?)',
  ECONNRESET: 'the connection was reset',
  ETIMEDOUT: 'the connection timed out',
  ENOTFOUND: 'the host name does not resolve',
  EPIPE: 'the connection was closed',
}

/** A sentence saying what `error` means, followed by the driver's message. */
export function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code !== 'string') return message || 'the connection failed'
  const meaning = CODES[code] ?? NODE_CODES[code]
  return meaning === undefined ? `${message} (${code})` : `${meaning}: ${message} (${code})`
}

/** `error` as a `StoreError` of `operation` (kept as is if it already is one). */
export function storeFailure(store: string, operation: StoreOperation, error: unknown, doing?: string): StoreError {
  if (error instanceof StoreError) return error
  const problem = doing === undefined ? describe(error) : `${doing}: ${describe(error)}`
  return new StoreError(store, operation, problem, error)
}

// Connection-level failures: the statement may not have reached the server, or its answer was lost.
const CONNECTION_LOSS = /^(08|57P0[12])/
const NODE_LOSS = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT'])

/**
 * Whether `error` is the loss of a connection (a pooled connection the server dropped while it sat
 * idle shows it on its next use) rather than the server refusing a statement.
 */
export function isConnectionLoss(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code === 'string') return CONNECTION_LOSS.test(code) || NODE_LOSS.has(code)
  const message = error instanceof Error ? error.message : ''
  return /Connection terminated|not queryable|connection error/i.test(message)
}

/**
 * Whether `error` is a commit meeting, in the unique index of in-flight idempotency keys, a row that
 * another transaction was writing while the commit checked (an enqueue, another loop's commit): sent
 * again, the commit sees that row and leaves its own key column empty.
 */
export function isIdempotencyConflict(error: unknown): boolean {
  const e = error as { code?: unknown; constraint?: unknown } | null
  return e?.code === '23505' && e.constraint === IDEMPOTENCY_INDEX
}
