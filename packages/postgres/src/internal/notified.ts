/**
 * Takeovers woken by the journal's notifications: a {@link Listener} whose notifications (and
 * reconnections) poke a {@link Wake}, which runs the store's takeover on the LISTEN connection itself —
 * so a burst of enqueues costs one takeover, and no connection of the pool is held.
 *
 * @module
 */
import type pg from 'pg'
import { Listener } from './listener.js'
import { Wake } from './wake.js'

/** The notified takeovers of one store. */
export class NotifiedTakeovers {
  readonly #listener: Listener
  readonly #wake: Wake

  private constructor(pool: pg.Pool, channel: string, takeOver: (client: pg.Client) => Promise<void>) {
    this.#wake = new Wake(async () => {
      const client = this.#listener.client
      if (client !== undefined) await takeOver(client)
    })
    this.#listener = new Listener(pool, channel, () => this.#wake.poke())
  }

  /**
   * Starts listening on `channel` with the settings of `pool`, once the first attempt to connect has
   * ended (a failure is tried again later); `takeOver` runs on the LISTEN connection once armed.
   */
  static async start(
    pool: pg.Pool,
    channel: string,
    takeOver: (client: pg.Client) => Promise<void>,
  ): Promise<NotifiedTakeovers> {
    const notified = new NotifiedTakeovers(pool, channel, takeOver)
    await notified.#listener.ready
    return notified
  }

  /** Whether the connection LISTENs now. */
  get listening(): boolean {
    return this.#listener.listening
  }

  /** Lets notifications run takeovers from now on (one now, if some came before). */
  arm(): void {
    this.#wake.arm()
  }

  /** Stops listening, and waits for a takeover in flight. */
  async stop(): Promise<void> {
    await this.#listener.stop()
    await this.#wake.idle()
  }
}
