/**
 * A dashboard on its own server, for scripts and demos: `await serve(dashboard, { port: 8080 })`.
 *
 * @module
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { InvalidArgumentError } from '@flowing/core'
import { argumentChecks } from '@flowing/errors'
import type { Dashboard, DashboardHandler } from './dashboard.js'
import { fail, HttpError } from './http/respond.js'

/**
 * Options of {@link serve}.
 *
 * @group Dashboard
 */
export interface ServeOptions {
  /**
   * The port; 0 takes a free one.
   * @defaultValue `0`
   */
  readonly port?: number
  /**
   * The interface to listen on. The default keeps the dashboard on this machine; on a loopback address
   * it answers only requests whose `Host` names this machine (`localhost`, `127.x.x.x`, `[::1]`), so
   * that another site cannot reach it through DNS rebinding.
   * @defaultValue `'127.0.0.1'`
   */
  readonly host?: string
}

/**
 * A running standalone dashboard server.
 *
 * @group Dashboard
 */
export interface ServedDashboard {
  /** The dashboard's address, e.g. `http://127.0.0.1:43117/flowing/`. */
  readonly url: string
  /** The server. */
  readonly server: Server
  /** Closes the dashboard's streams and the server. */
  close(): Promise<void>
}

const check = argumentChecks(InvalidArgumentError)

const isLoopback = (host: string): boolean => host === 'localhost' || host === '::1' || host.startsWith('127.')

// A server on a loopback address answers only requests named for this machine: a page of another site
// whose name was re-pointed at 127.0.0.1 (DNS rebinding) sends its own name in `Host`, and gets 421.
function onlyLocalHosts(handler: DashboardHandler): DashboardHandler {
  return (req, res) => {
    const name = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase()
    const local =
      name === 'localhost' || name.endsWith('.localhost') || name === '[::1]' || /^127(\.\d{1,3}){3}$/.test(name)
    if (local) return handler(req, res)
    fail(req, res, new HttpError(421, 'misdirected', `this dashboard answers for localhost, not ${name || 'no host'}`))
  }
}

/**
 * Serves `dashboard` on its own HTTP server.
 * @throws InvalidArgumentError for bad options; rejects when the port cannot be listened on
 * @group Dashboard
 */
export async function serve(dashboard: Dashboard, options: ServeOptions = {}): Promise<ServedDashboard> {
  const o = check.snapshot('options', options)
  check.knownKeys('options', o, ['port', 'host'])
  const port = check.integer('options.port', o['port'] ?? 0, { min: 0, max: 65_535 })
  const host = o['host'] ?? '127.0.0.1'
  if (typeof host !== 'string' || host === '') throw new InvalidArgumentError('options.host', 'a host name', host)
  const server = createServer(isLoopback(host) ? onlyLocalHosts(dashboard.handler) : dashboard.handler)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => resolve())
  })
  const address = server.address() as AddressInfo
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address
  return {
    url: `http://${shown}:${address.port}${dashboard.basePath}/`,
    server,
    close: () => {
      dashboard.close()
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
