/**
 * The `AbortSignal` type of the published declarations, which must compile in a program without
 * `@types/node` and without the DOM lib: only those two declare a global `AbortSignal`, no ES lib
 * does.
 *
 * @module
 */

/**
 * What a program with no global `AbortSignal` type sees of one: the members a handler reads. The
 * object is always a real `AbortSignal` at run time.
 */
export interface MinimalAbortSignal {
  /** Whether it was aborted. */
  readonly aborted: boolean
  /** Why it was aborted (`undefined` while not aborted). */
  readonly reason: unknown
  /** Throws {@link MinimalAbortSignal.reason} if aborted. */
  throwIfAborted(): void
  /** Listens for the abort. */
  addEventListener(type: 'abort', listener: () => void, options?: { readonly once?: boolean }): void
  /** Stops listening. */
  removeEventListener(type: 'abort', listener: () => void): void
}

/**
 * The global `AbortSignal` type wherever the program declares one (Node's types, `@types/node`, or
 * the DOM lib), so a signal passes on to `fetch()` and friends unchanged; else
 * {@link MinimalAbortSignal}. Resolved in the program that reads the declarations, not here.
 */
export type AbortSignalLike = typeof globalThis extends { AbortSignal: { prototype: infer S } } ? S : MinimalAbortSignal
