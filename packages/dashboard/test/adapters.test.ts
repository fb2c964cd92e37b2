/**
 * The dashboard mounted in Express, Fastify and Hono (on @hono/node-server) the way the guide shows:
 * the page, the JSON API, the live stream and an action with its token all work, and the app's own
 * routes are untouched.
 */
import type { AddressInfo } from 'node:net'
import { type HttpBindings, serve as honoServe } from '@hono/node-server'
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response'
import express from 'express'
import Fastify from 'fastify'
import { Hono } from 'hono'
import { afterEach, describe, expect, it } from 'vitest'
import { createDashboard, type Dashboard } from '../src/index.js'
import { demoLoop, sessionOf } from './fixture.js'

const closers: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const close of closers.splice(0)) await close()
})

type Mount = (dashboard: Dashboard) => Promise<{ origin: string; close: () => Promise<void> }>

const mounts: Record<string, Mount> = {
  async express(dashboard) {
    const app = express()
    app.use(express.json()) // the app's own body parser may come first: the dashboard reads req.body
    app.use(dashboard.handler)
    app.get('/hello', (_req, res) => {
      res.send('app')
    })
    const server = app.listen(0, '127.0.0.1')
    await new Promise((resolve) => server.once('listening', resolve))
    const { port } = server.address() as AddressInfo
    return { origin: `http://127.0.0.1:${port}`, close: () => closeServer(server) }
  },
  async fastify(dashboard) {
    const app = Fastify()
    app.addHook('onRequest', (request, reply, done) => {
      if (request.url !== dashboard.basePath && !request.url.startsWith(`${dashboard.basePath}/`)) return done()
      reply.hijack()
      dashboard.handler(request.raw, reply.raw)
    })
    app.get('/hello', async () => 'app')
    await app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = app.server.address() as AddressInfo
    return {
      origin: `http://127.0.0.1:${port}`,
      close: async () => {
        app.server.closeAllConnections()
        await app.close()
      },
    }
  },
  async hono(dashboard) {
    const app = new Hono<{ Bindings: HttpBindings }>()
    const mount = (c: { env: HttpBindings }) => {
      dashboard.handler(c.env.incoming, c.env.outgoing)
      return RESPONSE_ALREADY_SENT
    }
    app.all(dashboard.basePath, mount)
    app.all(`${dashboard.basePath}/*`, mount)
    app.get('/hello', (c) => c.text('app'))
    const server = honoServe({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' })
    await new Promise((resolve) => server.once('listening', resolve))
    const { port } = server.address() as AddressInfo
    return { origin: `http://127.0.0.1:${port}`, close: () => closeServer(server as never) }
  },
}

function closeServer(server: { closeAllConnections(): void; close(cb: () => void): void }): Promise<void> {
  server.closeAllConnections()
  return new Promise((resolve) => server.close(() => resolve()))
}

describe.each(Object.keys(mounts))('mounted in %s', (name) => {
  it('serves the page, the API and the stream, takes an action with its token, and leaves the app alone', async () => {
    const { loop } = demoLoop()
    const dashboard = createDashboard({ loops: { orders: loop }, authorize: () => true })
    const { origin, close } = await (mounts[name] as Mount)(dashboard)
    closers.push(async () => {
      dashboard.close()
      await close()
      await loop.stop()
    })
    const url = `${origin}/flowing/`
    const page = await fetch(url)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'")
    expect(await page.text()).toContain('assets/app.js')
    expect((await fetch(`${url}assets/uplot.js`)).status).toBe(200)
    expect(await (await fetch(`${origin}/hello`)).text()).toBe('app')
    const overview = (await (await fetch(`${url}api/loops/orders/overview`)).json()) as { loop: string }
    expect(overview.loop).toBe('orders')
    const stream = await fetch(`${url}api/loops/orders/stream`)
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/)
    const reader = (stream.body as ReadableStream<Uint8Array>).getReader()
    const first = new TextDecoder().decode((await reader.read()).value)
    expect(first).toContain('retry: 1000')
    await reader.cancel()
    loop.postDelayed('order.paid', { n: 1 }, 60_000, { jobKey: 'timeout:o-1' })
    const { cookie, csrf } = await sessionOf(url)
    const headers = { 'content-type': 'application/json', cookie, 'x-flowing-csrf': csrf, origin }
    const body = JSON.stringify({ jobKey: 'timeout:o-1' })
    const refused = await fetch(`${url}api/loops/orders/jobs/cancel`, {
      method: 'POST',
      headers: { ...headers, 'x-flowing-csrf': 'x' },
      body,
    })
    expect(refused.status).toBe(403)
    const done = await fetch(`${url}api/loops/orders/jobs/cancel`, { method: 'POST', headers, body })
    expect(await done.json()).toEqual({ result: 'cancelled' })
  })
})
