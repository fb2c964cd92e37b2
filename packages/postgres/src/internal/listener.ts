/**
 * The LISTEN side of transactional enqueue: a connection of its own (not one of the pool's, which it
 * would hold for good), made with the pool's settings and kept while the loop watches, LISTENing on the
 * journal's channel. A notification (sent by an enqueue, delivered by the server only when its
 * transaction commits) wakes the store's takeover at once, which runs on this same connection. The
 * connection is replaced after a loss, and a reconnection wakes a takeover too: what was enqueued while
 * nobody listened is taken then, not only at the next renewal.
 *
 * @module
 */
import pg from 'pg'
import { quote } from './sql.js'

// Waits between attempts to connect again after a loss: from the first to the last, then the last.
const RETRY_MS = [50, 200, 1_000] as const

/** One LISTEN connection, kept up until {@link Listener.stop}. */
export class Listener {
  readonly #config: pg.ClientConfig
  readonly #channel: string
  // Something may have been enqueued: take over now (on `client`).
  readonly #wake: () => void
  #client: pg.Client | undefined
  #connecting: Promise<void> | undefined
  readonly #ready: Promise<void>
  #retry: ReturnType<typeof setTimeout> | undefined
  #failures = 0
  #connections = 0
  #stopped = false

  /**
   * Starts listening on `channel` with the settings of `pool`; `wake` is called on each notification,
   * and after each reconnection.
   */
  constructor(pool: pg.Pool, channel: string, wake: () => void) {
    const name = `${pool.options.application_name ?? 'flowing'}:listen`.slice(-63)
    this.#config = { ...pool.options, application_name: name }
    this.#channel = channel
    this.#wake = wake
    this.#ready = this.#connect()
  }

  /** Resolves once the first attempt to connect and LISTEN has succeeded or failed. */
  get ready(): Promise<void> {
    return this.#ready
  }

  /** The connection, while it LISTENs. */
  get client(): pg.Client | undefined {
    return this.#client
  }

  /** Whether a connection is LISTENing now. */
  get listening(): boolean {
    return this.#client !== undefined
  }

  /** Stops listening and closes the connection. */
  async stop(): Promise<void> {
    this.#stopped = true
    clearTimeout(this.#retry)
    await this.#connecting
    await this.#drop()
  }

  #connect(): Promise<void> {
    const connecting = this.#listen().finally(() => {
      this.#connecting = undefined
    })
    this.#connecting = connecting
    return connecting
  }

  async #listen(): Promise<void> {
    const client = new pg.Client(this.#config)
    client.on('notification', (n) => {
      if (n.channel === this.#channel) this.#wake()
    })
    client.on('error', () => this.#lost(client))
    client.on('end', () => this.#lost(client))
    try {
      await client.connect()
      await client.query(`LISTEN ${quote(this.#channel)}`)
    } catch {
      await client.end().catch(() => {})
      this.#retryLater()
      return
    }
    if (this.#stopped) {
      await client.end().catch(() => {})
      return
    }
    this.#client = client
    this.#failures = 0
    // The store took over at open: only a reconnection may have missed notifications.
    if (this.#connections++ > 0) this.#wake()
  }

  // The connection broke: drop it, and connect again after a pause.
  #lost(client: pg.Client): void {
    if (client !== this.#client) return // not connected yet (its connect fails too), or dropped already
    void this.#drop()
    this.#retryLater()
  }

  #retryLater(): void {
    if (this.#stopped) return
    const wait = RETRY_MS[Math.min(this.#failures++, RETRY_MS.length - 1)]
    this.#retry = setTimeout(() => void this.#connect(), wait)
    this.#retry.unref()
  }

  async #drop(): Promise<void> {
    const client = this.#client
    this.#client = undefined
    await client?.end().catch(() => {})
  }
}
