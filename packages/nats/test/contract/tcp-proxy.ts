/**
 * A TCP proxy in front of a nats-server, one per contract "process": cutting it is how an in-process
 * NATS loop dies as the server sees a crash — its connection reset, no acknowledgement ever again —
 * while the test process lives on. Its upstream follows the server across restarts.
 */
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net'

/** A proxy on 127.0.0.1 to a local port. */
export class TcpProxy {
  readonly #target: number
  readonly #server: Server
  readonly #pairs = new Map<Socket, Socket>()
  #port = 0
  #cut = false
  #refusing = false

  private constructor(targetPort: number) {
    this.#target = targetPort
    this.#server = createServer((client) => this.#forward(client))
  }

  /** Listens on a free port, forwarding every connection to `targetPort`. */
  static async start(targetPort: number): Promise<TcpProxy> {
    const proxy = new TcpProxy(targetPort)
    await new Promise<void>((resolve, reject) => {
      proxy.#server.once('error', reject)
      proxy.#server.listen(0, '127.0.0.1', () => resolve())
    })
    const address = proxy.#server.address()
    if (typeof address !== 'object' || address === null) throw new Error('the proxy has no address')
    proxy.#port = address.port
    return proxy
  }

  /** `127.0.0.1:<port>`. */
  get url(): string {
    return `127.0.0.1:${this.#port}`
  }

  /**
   * Ends every connection as a killed process's do — what it wrote before reaches the server (closed
   * after it), nothing it writes later does — and resets every later one at once.
   */
  cut(): void {
    this.#cut = true
    for (const [client, upstream] of this.#pairs) {
      client.unpipe(upstream)
      client.destroy()
      upstream.end()
    }
  }

  /** Resets every new connection until `refusing(false)`; open ones are left alone. */
  refusing(on: boolean): void {
    this.#refusing = on
  }

  /** Cuts and stops listening. */
  close(): Promise<void> {
    this.cut()
    return new Promise((resolve) => this.#server.close(() => resolve()))
  }

  #forward(client: Socket): void {
    if (this.#cut || this.#refusing) {
      client.destroy()
      return
    }
    const upstream = tcpConnect({ host: '127.0.0.1', port: this.#target })
    this.#pairs.set(client, upstream)
    const end = () => {
      this.#pairs.delete(client)
      client.destroy()
      upstream.end()
    }
    for (const s of [client, upstream]) {
      s.on('error', () => {})
      s.on('close', end)
    }
    client.pipe(upstream)
    upstream.pipe(client)
  }
}
