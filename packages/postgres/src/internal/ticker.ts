/**
 * The store's one background timer: it runs a piece of work every period, never two at once (a tick
 * that finds the previous one still running is skipped), and never keeps the process alive.
 *
 * @module
 */

/** A periodic task. */
export class Ticker {
  readonly #work: () => Promise<void>
  readonly #timer: ReturnType<typeof setInterval>
  // The tick in flight, awaited by stop().
  #running: Promise<void> | undefined
  #stopped = false

  /**
   * Starts ticking.
   *
   * @param everyMs - the period
   * @param work - what a tick does (its rejection is ignored: `work` reports its own failures)
   */
  constructor(everyMs: number, work: () => Promise<void>) {
    this.#work = work
    this.#timer = setInterval(() => this.#tick(), everyMs)
    this.#timer.unref()
  }

  /** Stops ticking; resolves once a tick in flight has finished. */
  async stop(): Promise<void> {
    this.#stopped = true
    clearInterval(this.#timer)
    await this.#running
  }

  #tick(): void {
    if (this.#running !== undefined || this.#stopped) return
    this.#running = this.#work()
      .catch(() => {})
      .finally(() => {
        this.#running = undefined
      })
  }
}
