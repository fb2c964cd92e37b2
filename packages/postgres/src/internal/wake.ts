/**
 * A piece of work run on demand, never twice at once, with bursts coalesced: pokes that arrive while it
 * runs make exactly one more run after it (which sees everything they announced), however many they are.
 * It runs nothing before it is armed; a poke before then makes one run at arming.
 *
 * @module
 */

/** Work run when poked. */
export class Wake {
  readonly #work: () => Promise<void>
  #running: Promise<void> | undefined
  #again = false
  #armed = false
  #missed = false

  /** @param work - what a run does (its rejection is ignored: `work` reports its own failures) */
  constructor(work: () => Promise<void>) {
    this.#work = work
  }

  /** Lets pokes run the work from now on (once now, if one came before). */
  arm(): void {
    this.#armed = true
    if (this.#missed) this.poke()
  }

  /** Runs the work now, or once more after the run in flight (or at arming, if not armed yet). */
  poke(): void {
    this.#missed = !this.#armed
    if (!this.#armed) return
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
