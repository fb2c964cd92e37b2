/**
 * Reading a snapshot handed to `restore()` once, into plain data. A snapshot may come from anywhere —
 * parsed JSON, a message queue, a user's object with getters, a `Proxy` — and a restore reads its
 * fields more than once (validation, then the re-admission). Copying it first means a getter or a
 * Proxy trap runs here and nowhere else: one that throws fails the restore before anything changes,
 * with a `SnapshotError` naming the field and the thrown value as `cause`, and one that answers
 * differently on a second read cannot slip a value past the validation.
 *
 * Payloads and checkpoints are the user's data: they are kept by reference, never read here.
 *
 * @module
 */
import { SnapshotError } from '../errors.js'
import { thrownText } from '../failure/describe-failure.js'

// Fields of a message kept as given (the restore does not read into them).
const OPAQUE = new Set(['payload', 'checkpoint'])
// Nesting copied below a message's field (an attempt's error and its `cause` chain); deeper is kept.
const MAX_DEPTH = 12

/**
 * A plain copy of `value` as far as a snapshot goes — the top level, `messages`, each message's
 * fields and what they hold (attempts, retry policy, headers) — each property read exactly once.
 * What is not an object is returned as is (the validation refuses it).
 * @throws SnapshotError naming the first field whose listing or reading threw (`cause`: what it threw)
 */
export function readSnapshot(value: unknown): unknown {
  const top = fieldsOf('', value)
  if (top === undefined) return value
  const messages = top['messages']
  const list = listOf('messages', messages)
  if (list !== undefined) top['messages'] = list.map((m, i) => readMessage(`messages[${i}]`, m))
  return top
}

function readMessage(path: string, value: unknown): unknown {
  const fields = fieldsOf(path, value)
  if (fields === undefined) return value
  for (const key of Object.keys(fields)) {
    // A path is built only for what has fields of its own: most of a message's fields are primitives.
    if (!OPAQUE.has(key) && isObject(fields[key])) fields[key] = deepCopy(`${path}.${key}`, fields[key], MAX_DEPTH)
  }
  return fields
}

function deepCopy(path: string, value: unknown, depth: number): unknown {
  if (depth === 0) return value
  const list = listOf(path, value)
  if (list !== undefined) {
    for (let i = 0; i < list.length; i++) if (isObject(list[i])) list[i] = deepCopy(`${path}[${i}]`, list[i], depth - 1)
    return list
  }
  const fields = fieldsOf(path, value)
  if (fields === undefined) return value
  for (const key of Object.keys(fields)) {
    if (isObject(fields[key])) fields[key] = deepCopy(`${path}.${key}`, fields[key], depth - 1)
  }
  return fields
}

function isObject(value: unknown): value is object {
  return value !== null && typeof value === 'object'
}

// The own enumerable fields of a non-array object, read once; undefined for anything else. Paths are
// written out only for the error.
function fieldsOf(path: string, value: unknown): Record<string, unknown> | undefined {
  if (!isObject(value) || isArray(path, value)) return undefined
  let keys: string[]
  try {
    keys = Object.keys(value)
  } catch (error) {
    throw unreadable(path, error)
  }
  const copy: Record<string, unknown> = {}
  for (const key of keys) {
    try {
      copy[key] = (value as Record<string, unknown>)[key]
    } catch (error) {
      throw unreadable(path === '' ? key : `${path}.${key}`, error)
    }
  }
  return copy
}

// The items of an array, each read once; undefined for anything else.
function listOf(path: string, value: unknown): unknown[] | undefined {
  if (!isObject(value) || !isArray(path, value)) return undefined
  const array = value as unknown[]
  let i = -1
  try {
    const length = array.length
    const copy: unknown[] = []
    for (i = 0; i < length; i++) copy.push(array[i])
    return copy
  } catch (error) {
    throw unreadable(i < 0 ? `${path}.length` : `${path}[${i}]`, error)
  }
}

function isArray(path: string, value: object): boolean {
  try {
    return Array.isArray(value) // a revoked Proxy throws here
  } catch (error) {
    throw unreadable(path, error)
  }
}

function unreadable(path: string, error: unknown): SnapshotError {
  return new SnapshotError(path, `cannot be read (reading it threw ${thrownText(error)})`, { cause: error })
}
