/**
 * The modules a pool's tasks have used, shared with its threads so that a thread started later — a
 * replacement for one a deadline terminated, or one more under load — begins loading them at once
 * instead of at its first task. Best effort: a list too long for the buffer, or read while it is
 * rewritten, is simply not preloaded.
 *
 * @module
 */

const BYTES = 64 * 1024

/** The pool's side: remembers each module once and publishes the list. */
export class PreloadList {
  /** Shared with every thread (piscina's `workerData`). */
  readonly buffer = new SharedArrayBuffer(BYTES)
  readonly #length = new Int32Array(this.buffer, 0, 1)
  readonly #bytes = new Uint8Array(this.buffer, 4)
  readonly #modules = new Set<string>()

  /** Adds `href` (once); its threads to come will load it as they start. */
  add(href: string): void {
    if (this.#modules.has(href)) return
    this.#modules.add(href)
    const encoded = new TextEncoder().encode(JSON.stringify([...this.#modules]))
    if (encoded.length > this.#bytes.length) return
    Atomics.store(this.#length, 0, 0)
    this.#bytes.set(encoded)
    Atomics.store(this.#length, 0, encoded.length)
  }
}

/** The thread's side: the modules listed in `buffer` now (none when it cannot be read). */
export function readPreload(buffer: unknown): string[] {
  if (!(buffer instanceof SharedArrayBuffer)) return []
  const length = Atomics.load(new Int32Array(buffer, 0, 1), 0)
  try {
    const list: unknown = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 4, length).slice()))
    return Array.isArray(list) ? list.filter((m): m is string => typeof m === 'string') : []
  } catch {
    return []
  }
}
