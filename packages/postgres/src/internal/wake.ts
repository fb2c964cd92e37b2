/**
 * A piece of work run on demand, never twice at once, with bursts coalesced: pokes that arrive while it
 * runs make exactly one more run after it (which sees everything they announced), however many they are.
 *
 * @module
 */

/** Work run when poked. */
export class Wake {
  readonly #work: () => Promise<void>
  #running: Promise<void> | undefined
  #again = false

  /** @param work - what a run does (its rejection is ignored: `work` reports its own failures) */
  constructor(work: () => Promise<void>) {
    this.#work = work
  }

  /** Runs the work now, or once more after the run in flight. */
  poke(): void {
    if (this.#running !== undefined) {
      this.#again = true
      return
    }
    this.#running = this.#loop()
  }

  /** Resolves once no run is in flight (nor due). */
  async idle(): Promise<void> {
    await this.#running
  }

  async #loop(): Promise<void> {
    try {
      do {
        this.#again = false
        await this.#work().catch(() => {})
      } while (this.#again)
    } finally {
      this.#running = undefined
    }
  }
}
