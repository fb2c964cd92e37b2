/**
 * KV keys for strings of any shape (idempotency keys, breaker routes), and the check of a KV store's
 * options.
 *
 * @module
 */
import { InvalidArgumentError } from '@flowing/core'

const utf8 = new TextEncoder()

/**
 * The KV key of a string: one-to-one, readable for the usual keys. KV keys allow `[-/=.\w]` but not
 * a leading or trailing dot; dots (subject separators) and `=` are escaped too, so every `=` in a KV
 * key starts an escape. The empty string becomes a lone `=` (no escape is that short).
 */
export function encodeKey(key: string): string {
  if (key === '') return '='
  let out = ''
  for (const char of key) {
    if (/[A-Za-z0-9_/-]/.test(char)) out += char
    else for (const byte of utf8.encode(char)) out += `=${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

/**
 * The options of `KvIdempotencyStore.open`, checked; `replicas` 1 when not given.
 * @throws InvalidArgumentError naming the option
 */
export function checkStoreOptions(options: { bucket: unknown; ttlMs: unknown; replicas?: unknown }): {
  bucket: string
  ttlMs: number
  replicas: number
} {
  const { bucket, ttlMs, replicas = 1 } = options
  if (typeof bucket !== 'string' || !/^[-\w]+$/.test(bucket)) {
    throw new InvalidArgumentError('options.bucket', 'a KV bucket name (letters, digits, `-`, `_`)', bucket)
  }
  if (typeof ttlMs !== 'number' || !Number.isSafeInteger(ttlMs) || ttlMs <= 0) {
    throw new InvalidArgumentError('options.ttlMs', 'a positive integer (ms)', ttlMs)
  }
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 1 || replicas > 5) {
    throw new InvalidArgumentError('options.replicas', 'an integer from 1 to 5', replicas)
  }
  return { bucket, ttlMs, replicas }
}
