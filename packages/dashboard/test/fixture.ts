/**
 * A loop with a little of everything a dashboard shows, and a server for it on a free port.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createLoop, type Loop, NonRetryableError } from '@flowing/core'
import { afterEach } from 'vitest'
import { createDashboard, type Dashboard, type DashboardOptions } from '../src/index.js'

/** A type name and a payload that would run script if the page ever parsed them as HTML. */
export const HOSTILE_TYPE = '<img src=x onerror="window.__pwned=1">'
export const HOSTILE_TEXT = '</style><script>window.__pwned=2</script><img src=x onerror="window.__pwned=3">'

export type Messages = Record<string, { n: number; fail?: boolean; text?: string }>

/** A running loop: `order.paid` succeeds, `mail.send` dead-letters when `fail`, a hostile type fails. */
export function demoLoop(): { loop: Loop<Messages>; handled: string[] } {
  const handled: string[] = []
  const loop = createLoop<Messages>({
    workers: 4,
    capacity: 10_000,
    traces: 'all',
    logger: false,
    retry: { maxAttempts: 2, baseMs: 1 },
  })
  loop.on('order.paid', async (m) => {
    handled.push(`order.paid:${m.payload.n}`)
  })
  loop.on('mail.send', async (m) => {
    if (m.payload.fail) throw new NonRetryableError(`relay refused ${m.payload.text ?? 'mail'}`)
    handled.push(`mail.send:${m.payload.n}`)
  })
  loop.on(HOSTILE_TYPE, async (m) => {
    throw new NonRetryableError(m.payload.text ?? HOSTILE_TEXT)
  })
  return { loop, handled }
}

/** A dashboard over `loop` served on 127.0.0.1 at a free port. */
export async function served(options: DashboardOptions): Promise<{
  dashboard: Dashboard
  server: Server
  url: string
  origin: string
  close: () => Promise<void>
}> {
  const dashboard = createDashboard(options)
  const server = createServer(dashboard.handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const origin = `http://127.0.0.1:${port}`
  return {
    dashboard,
    server,
    origin,
    url: `${origin}${dashboard.basePath}/`,
    close: async () => {
      dashboard.close()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** Waits until `check` returns a value that is not undefined (real time; `timeoutMs` at most). */
export async function until<T>(check: () => T | undefined | Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined && value !== false) return value as T
    if (Date.now() > end) throw new Error('timed out waiting')
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

/** The session cookie and CSRF token a page would get. */
export async function sessionOf(url: string): Promise<{ cookie: string; csrf: string; body: Record<string, unknown> }> {
  const res = await fetch(`${url}api/session`)
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] as string
  const body = (await res.json()) as Record<string, unknown>
  return { cookie, csrf: body['csrf'] as string, body }
}

// biome-ignore lint/suspicious/noExplicitAny: the tests read the API's JSON
export type Json = any

/** The JSON a GET answers. */
export const getJson = async (url: string): Promise<Json> => (await fetch(url)).json()

/**
 * A file's demo loops and dashboards: `setup(options)` serves a dashboard named `orders` over a fresh
 * demo loop; everything set up (and anything pushed on `closers`) is closed after each test.
 */
export function useDemo() {
  const closers: (() => Promise<void>)[] = []
  afterEach(async () => {
    for (const close of closers.splice(0)) await close()
  })
  const setup = async (options: Record<string, unknown> = {}) => {
    const { loop, handled } = demoLoop()
    const s = await served({ loops: { orders: loop }, ...options })
    closers.push(async () => {
      await s.close()
      await loop.stop()
    })
    return { loop, handled, ...s }
  }
  return { setup, closers }
}
