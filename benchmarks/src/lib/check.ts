/**
 * Self-checks: a benchmark that processed the wrong count is a failed benchmark, not a fast one.
 *
 * @module
 */

/** A count or invariant violation. The entry point prints its message and exits with code 1. */
export class BenchError extends Error {
  override readonly name = 'BenchError'
}

/**
 * Throws a {@link BenchError} naming `what` and both values unless `actual === expected`.
 * @example expectEqual('flowing w8 burst: handler calls', 19_999, 20_000)
 */
export function expectEqual(what: string, actual: unknown, expected: unknown): void {
  if (actual !== expected) throw new BenchError(`${what}: expected ${String(expected)}, got ${String(actual)}`)
}

/**
 * Rejects with a {@link BenchError} if `promise` has not settled after `ms`. The timer also keeps the
 * event loop alive: a promise that never settles (a lost message) must fail the run, not let Node exit 0.
 */
export function withDeadline<T>(promise: Promise<T>, ms: number, describe: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new BenchError(`no progress after ${ms / 1000} s: ${describe()}`)), ms)
  })
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer))
}
