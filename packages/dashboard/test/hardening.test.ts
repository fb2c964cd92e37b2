/**
 * Regression tests for what an outside review found: requests that crashed the app, a path that
 * reached the dashboard around an app's path-based authentication, streams that outlived their
 * client, data that left the server with payloads hidden, DNS rebinding on a local server, and a
 * dashboard that stayed on its loops after `close()`.
 */
import { connect } from 'node:net'
import { InvalidArgumentError } from '@flowing/core'
import { describe, expect, it } from 'vitest'
import { createDashboard, serve } from '../src/index.js'
import { demoLoop, getJson, served, sessionOf, until, useDemo } from './fixture.js'

const { setup, closers } = useDemo()

// One raw HTTP/1.1 request (paths `fetch` would normalize), its status line and body.
function raw(origin: string, lines: string[]): Promise<string> {
  const { hostname, port } = new URL(origin)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(`${lines.join('\r\n')}\r\n\r\n`))
    let text = ''
    socket.on('data', (d) => {
      text += d.toString()
    })
    socket.on('end', () => resolve(text))
    socket.on('error', reject)
  })
}

const get = (origin: string, path: string, host = new URL(origin).host) =>
  raw(origin, [`GET ${path} HTTP/1.1`, `Host: ${host}`, 'Connection: close'])

describe('paths', () => {
  it('answers odd paths without throwing, and matches its base on the path as sent', async () => {
    const { origin } = await setup()
    for (const path of ['//', '//[', '//a:b', '/x/%2e%2e/flowing/api/loops', '/x/../flowing/api/loops']) {
      expect(await get(origin, path), path).toMatch(/^HTTP\/1\.1 404/)
    }
    for (const path of ['/flowing/%2e%2e/x', '/flowing//api/loops', '/flowing/api/loops/%ZZ/overview']) {
      const answer = await get(origin, path)
      expect(answer, path).toMatch(/^HTTP\/1\.1 400/)
      expect(answer).toContain('"code":"bad-request"')
    }
    expect(await get(origin, '/flowing/api/loops')).toMatch(/^HTTP\/1\.1 200/)
  })

  it('closes the connection of a request whose body was too large', async () => {
    const { url, origin } = await setup({ authorize: () => true })
    const { cookie, csrf } = await sessionOf(url)
    const res = await fetch(`${url}api/loops/orders/jobs/cancel`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie, 'x-flowing-csrf': csrf, origin },
      body: JSON.stringify({ jobKey: 'x'.repeat(70_000) }),
    })
    expect(res.status).toBe(413)
    expect(res.headers.get('connection')).toBe('close')
  })
})

describe('streams', () => {
  it('opens no stream for a client that left while it was being authorized', async () => {
    let release = () => {}
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const { loop, dashboard, url } = await setup({ authorize: async () => gate.then(() => true) })
    const aborted = new AbortController()
    const request = fetch(`${url}api/loops/orders/stream`, { signal: aborted.signal }).catch(() => undefined)
    await new Promise((resolve) => setTimeout(resolve, 50))
    aborted.abort()
    await request
    await new Promise((resolve) => setTimeout(resolve, 50))
    release()
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(dashboard.pages).toBe(0)
    expect(loop.events.listenerCount('posted') + loop.events.listenerCount('failed')).toBe(0)
  })

  it('answers HEAD on the stream without holding it open', async () => {
    const { url, dashboard } = await setup()
    const res = await fetch(`${url}api/loops/orders/stream`, { method: 'HEAD' })
    expect(res.status).toBe(200)
    expect(dashboard.pages).toBe(0)
  })

  it('survives a view whose data JSON cannot carry (a BigInt in a pool stats)', async () => {
    const pool = { stats: () => ({ threads: 1n, queued: 0 }) }
    const { url } = await setup({ threads: { odd: pool } })
    const res = await fetch(`${url}api/loops/orders/stream?view=threads`)
    const reader = (res.body as ReadableStream<Uint8Array>).getReader()
    let text = ''
    while (!text.includes('event: tick')) text += new TextDecoder().decode((await reader.read()).value)
    expect(text).toContain('"threads":"1n"')
    await reader.cancel()
    expect(await getJson(`${url}api/loops/orders/threads`)).toEqual([
      { name: 'odd', stats: { threads: '1n', queued: 0 } },
    ])
  })
})

describe('data', () => {
  it('lists letters as summaries; with payloads hidden, a letter hides its headers and checkpoint too', async () => {
    const { url, loop } = await setup()
    loop.post('mail.send', { n: 1, fail: true, text: 'secret' }, { headers: { 'x-user': 'ann' } })
    await loop.drain()
    const list = await getJson(`${url}api/loops/orders/dead-letters`)
    expect(list.letters[0]).not.toHaveProperty('payload')
    expect(list.letters[0].error).not.toHaveProperty('stack')
    expect(list.letters[0].attempts).toBe(1)
    const { letter } = await getJson(`${url}api/loops/orders/dead-letters/${list.letters[0].id}`)
    expect(letter.payload).toMatchObject({ hidden: true })
    expect(letter.headers).toMatchObject({ hidden: true })
    expect(JSON.stringify(letter)).not.toContain('ann')
    expect(letter.error.stack).toContain('relay refused secret')
  })
})

describe('options and lifecycle', () => {
  it('normalizes allowed origins and refuses wildcards and dot segments in the base path', async () => {
    const { loop } = demoLoop()
    expect(() => createDashboard({ loops: loop, allowedOrigins: ['https://*.example.com'] })).toThrow(/no wildcard/)
    expect(() => createDashboard({ loops: loop, basePath: '/a/..' })).toThrow(/options.basePath/)
    expect(() => createDashboard({ loops: loop, secret: 'short' })).toThrow(/at least 32 characters/)
    await loop.stop()
  })

  it('refuses hostile options (throwing getters, Proxies) with InvalidArgumentError, naming the option', async () => {
    const { loop } = demoLoop()
    const trap = new Proxy(
      {},
      {
        get: () => {
          throw new Error('trap')
        },
        getPrototypeOf: () => {
          throw new Error('proto')
        },
      },
    )
    const throwingNats = {
      get local() {
        throw new Error('no local')
      },
      metrics: () => ({ partitions: 0 }),
    }
    const throwingPool = {
      get stats() {
        throw new Error('no stats')
      },
    }
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ loops: trap }, /options.loops/],
      [{ loops: { orders: trap } }, /options.loops.orders.*a Flowing loop/],
      [{ loops: { orders: throwingNats } }, /options.loops.orders.*a Flowing loop/],
      [{ loops: loop, threads: { render: throwingPool } }, /options.threads.render/],
      [trap, /options/],
    ]
    for (const [options, message] of cases) {
      const e = (() => {
        try {
          createDashboard(options as never)
        } catch (error) {
          return error
        }
        return undefined
      })()
      expect(e, String(message)).toBeInstanceOf(InvalidArgumentError)
      expect((e as Error).message).toMatch(message)
    }
    await loop.stop()
  })

  it('takes a token from another replica with the same secret', async () => {
    const secret = 'a-secret-of-at-least-thirty-two-characters'
    const a = await setup({ authorize: () => true, secret })
    const b = await setup({ authorize: () => true, secret })
    const { cookie, csrf } = await sessionOf(a.url)
    b.loop.postDelayed('order.paid', { n: 1 }, 60_000, { jobKey: 'k' })
    const res = await fetch(`${b.url}api/loops/orders/jobs/cancel`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie, 'x-flowing-csrf': csrf, origin: b.origin },
      body: JSON.stringify({ jobKey: 'k' }),
    })
    expect(await res.json()).toEqual({ result: 'cancelled' })
  })

  it('leaves its loops when closed: no listener of its own stays on them', async () => {
    const { loop } = demoLoop()
    const events = ['circuit', 'workers', 'backpressure', 'gate', 'alert', 'posted', 'failed'] as const
    const count = () => events.reduce((n, e) => n + loop.events.listenerCount(e), 0)
    const before = count()
    const s = await served({ loops: { orders: loop } })
    const stream = await fetch(`${s.url}api/loops/orders/stream`)
    await until(() => s.dashboard.pages === 1)
    expect(count()).toBeGreaterThan(before)
    await s.close()
    await stream.body?.cancel().catch(() => {})
    expect(s.dashboard.pages).toBe(0)
    expect(count()).toBe(before)
    await loop.stop()
  })

  it('serve() on a loopback address answers only requests named for this machine (DNS rebinding)', async () => {
    const { loop } = demoLoop()
    const s = await serve(createDashboard({ loops: loop }), { port: 0 })
    closers.push(async () => {
      await s.close()
      await loop.stop()
    })
    const origin = new URL(s.url).origin
    expect(await get(origin, '/flowing/api/loops', 'evil.example:80')).toMatch(/^HTTP\/1\.1 421/)
    expect(await get(origin, '/flowing/api/loops', `localhost:${new URL(s.url).port}`)).toMatch(/^HTTP\/1\.1 200/)
    expect(await get(origin, '/flowing/api/loops')).toMatch(/^HTTP\/1\.1 200/)
  })
})
