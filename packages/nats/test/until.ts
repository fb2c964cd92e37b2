/**
 * Polling on real time for the suites that run real servers and processes.
 */

/**
 * Resolves once `done()` holds (checked every 10 ms).
 * @throws naming `what` when it does not within `ms`
 */
export async function until(done: () => boolean, ms: number, what: string): Promise<void> {
  for (const end = Date.now() + ms; !done(); await new Promise((r) => setTimeout(r, 10))) {
    if (Date.now() > end) throw new Error(`${what}: not done in ${ms} ms`)
  }
}
