/**
 * KV keys for strings of any shape (idempotency keys, breaker routes).
 *
 * @module
 */

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
