import { request } from 'node:http'
import { gunzipSync } from 'node:zlib'
import { InvalidArgumentError } from '@flowing/core'
import { describe, expect, it } from 'vitest'
import { ASSET_NAMES } from '../src/http/assets.js'
import { CSP, createDashboard } from '../src/index.js'
import { demoLoop, getJson, HOSTILE_TEXT, HOSTILE_TYPE, type Json, sessionOf, until, useDemo } from './fixture.js'

const { setup, closers } = useDemo()

const allowAll = () => true

async function post(url: string, path: string, body: unknown, headers: Record<string, string>) {
  const res = await fetch(`${url}api/loops/orders/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })
  return { status: res.status, body: (await res.json()) as Json }
}

async function deadLetter(loop: ReturnType<typeof demoLoop>['loop'], type = 'mail.send', text = 'x') {
  loop.post(type, { n: 1, fail: true, text })
  await loop.drain()
  return loop.deadLetters.list().at(-1) as { id: string }
}

describe('options', () => {
  it('refuses a typo, a bad base path and something that is not a loop, with InvalidArgumentError', () => {
    const { loop } = demoLoop()
    expect(() => createDashboard({ loops: loop, basepath: '/x' } as never)).toThrow(InvalidArgumentError)
    expect(() => createDashboard({ loops: loop, basepath: '/x' } as never)).toThrow(/did you mean `basePath`/)
    expect(() => createDashboard({ loops: loop, basePath: 'flowing' })).toThrow(/options.basePath/)
    expect(() => createDashboard({ loops: loop, basePath: '/a/' })).toThrow(InvalidArgumentError)
    expect(() => createDashboard({ loops: { orders: {} as never } })).toThrow(/options.loops.orders.*a Flowing loop/)
    expect(() => createDashboard({ loops: {} })).toThrow(/at least one named loop/)
    expect(() => createDashboard({ loops: { 'bad name': loop } })).toThrow(InvalidArgumentError)
    expect(() => createDashboard({ loops: loop, payloads: 'show' as never })).toThrow(/did you mean `shown`/)
    expect(() => createDashboard({ loops: loop, authorize: true as never })).toThrow(/options.authorize.*a function/)
    expect(() => createDashboard({ loops: loop, allowedOrigins: ['ftp://x'] })).toThrow(/allowedOrigins\[0\]/)
    expect(() => createDashboard({ loops: loop, historySeconds: 5 })).toThrow(/historySeconds/)
    expect(() => createDashboard({ loops: loop, threads: { a: {} as never } })).toThrow(/a ThreadPool/)
    expect(() => createDashboard(undefined as never)).toThrow(InvalidArgumentError)
  })
})

describe('mounting', () => {
  it('answers under its base path and passes anything else to next()', async () => {
    const { loop } = demoLoop()
    const dashboard = createDashboard({ loops: loop, basePath: '/ops/flowing' })
    let passed = 0
    const res = { statusCode: 0, setHeader() {}, end() {} } as never
    dashboard.handler({ url: '/other', method: 'GET', headers: {} } as never, res, () => passed++)
    dashboard.handler({ url: '/ops/flowingx', method: 'GET', headers: {} } as never, res, () => passed++)
    expect(passed).toBe(2)
    dashboard.close()
    await loop.stop()
  })

  it('serves the page with a strict CSP, security headers, the token cookie and gzip', async () => {
    const { url } = await setup()
    const res = await fetch(url)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-security-policy')).toBe(CSP)
    expect(CSP).toContain("script-src 'self'")
    expect(CSP).not.toContain('unsafe-inline')
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    expect(res.headers.get('x-frame-options')).toBe('DENY')
    expect(res.headers.get('set-cookie')).toMatch(/^flowing_csrf=[\w-]+; Path=\/; HttpOnly; SameSite=Strict/)
    const html = await res.text()
    expect(html).not.toMatch(/https?:\/\//) // nothing from a CDN
    const raw = await rawGet(`${url}assets/app.js`, { 'accept-encoding': 'gzip' })
    expect(raw.headers['content-encoding']).toBe('gzip')
    expect(gunzipSync(raw.body).toString()).toContain("from './views.js'")
    const redirect = await fetch(url.slice(0, -1), { redirect: 'manual' })
    expect(redirect.status).toBe(308)
  })

  it('weighs at most 150 KB compressed (page, script, styles, chart library)', async () => {
    const { url } = await setup()
    let total = 0
    for (const name of ['', ...ASSET_NAMES.filter((a) => a !== 'index.html').map((a) => `assets/${a}`)]) {
      const raw = await rawGet(`${url}${name}`, { 'accept-encoding': 'gzip' })
      expect(raw.status).toBe(200)
      total += raw.body.length
    }
    expect(total).toBeLessThan(150 * 1024)
  })
})

describe('JSON API', () => {
  it('lists the loops and their views, and answers each view', async () => {
    const { url, loop } = await setup()
    loop.post('order.paid', { n: 1 }, { key: 'k1' })
    await loop.drain()
    const loops = await getJson(`${url}api/loops`)
    expect(loops).toEqual([
      { name: 'orders', kind: 'loop', state: 'running', views: expect.arrayContaining(['overview', 'keys']) },
    ])
    for (const view of ['overview', 'keys', 'flow', 'delayed', 'dead-letters', 'series', 'threads']) {
      const res = await fetch(`${url}api/loops/orders/${view}`)
      expect(res.status, view).toBe(200)
      expect(res.headers.get('content-type')).toMatch(/^application\/json/)
    }
    const overview = await getJson(`${url}api/loops/orders/overview`)
    expect(overview.counters.succeeded).toBe(1)
    expect((await fetch(`${url}api/loops/nope/overview`)).status).toBe(404)
    expect((await fetch(`${url}api/loops/orders/nope`)).status).toBe(404)
    expect((await fetch(`${url}api/loops/orders/dead-letters?errorClass=bad`)).status).toBe(400)
  })

  it('filters dead letters by type, error class and time, and hides payloads by default', async () => {
    const { url, loop } = await setup()
    await deadLetter(loop, 'mail.send', 'secret-1')
    await deadLetter(loop, HOSTILE_TYPE, 'h')
    const all = await getJson(`${url}api/loops/orders/dead-letters`)
    expect(all.total).toBe(2)
    const one = await getJson(`${url}api/loops/orders/dead-letters/${all.letters[0].id}`)
    expect(one.letter.payload).toEqual({ hidden: true, bytes: expect.any(Number) })
    expect(JSON.stringify(all)).not.toContain('"text":"secret-1"')
    const mail = await getJson(`${url}api/loops/orders/dead-letters?type=mail.send`)
    expect(mail.letters.map((l: { type: string }) => l.type)).toEqual(['mail.send'])
    const none = await getJson(`${url}api/loops/orders/dead-letters?errorClass=retryable`)
    expect(none.total).toBe(0)
    const future = await getJson(`${url}api/loops/orders/dead-letters?since=${all.now + 1000}`)
    expect(future.total).toBe(0)
  })

  it('shows payloads through the per-type redactor when allowed; a throwing redactor shows a note', async () => {
    const redact = {
      'mail.send': (p: Json) => ({ ...p, text: '***' }),
      [HOSTILE_TYPE]: () => {
        throw new Error('no')
      },
    }
    const { url, loop } = await setup({ payloads: 'shown', redact })
    const letter = await deadLetter(loop, 'mail.send', 'secret')
    const one = await getJson(`${url}api/loops/orders/dead-letters/${letter.id}`)
    expect(one.letter.payload).toEqual({ n: 1, fail: true, text: '***' })
    expect(one.letter.error.message).toBe('relay refused secret')
    const hostile = await deadLetter(loop, HOSTILE_TYPE, 'h')
    const two = await getJson(`${url}api/loops/orders/dead-letters/${hostile.id}`)
    expect(two.letter.payload).toBe('[redactor threw]')
  })

  it('carries hostile strings as JSON text, never as HTML', async () => {
    const { url, loop } = await setup({ payloads: 'shown' })
    await deadLetter(loop, HOSTILE_TYPE, HOSTILE_TEXT)
    const res = await fetch(`${url}api/loops/orders/dead-letters`)
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    const body = (await res.json()) as Json
    expect(body.letters[0].type).toBe(HOSTILE_TYPE)
    expect(body.letters[0].error.message).toBe(HOSTILE_TEXT)
  })
})

describe('actions', () => {
  it('are refused in read-only mode (no authorize hook), with the token', async () => {
    const { url, loop } = await setup()
    const letter = await deadLetter(loop)
    const { cookie, csrf, body } = await sessionOf(url)
    expect(body['readOnly']).toBe(true)
    const r = await post(
      url,
      'dead-letters/replay',
      { ids: [letter.id] },
      { cookie, 'x-flowing-csrf': csrf, origin: new URL(url).origin },
    )
    expect(r.status).toBe(403)
    expect(r.body.error).toEqual({ code: 'forbidden', message: 'not allowed to replay' })
    expect(loop.deadLetters.size).toBe(1)
  })

  it('need the CSRF token, a same-origin Origin and a JSON body', async () => {
    const { url, loop, origin } = await setup({ authorize: allowAll })
    const letter = await deadLetter(loop)
    const { cookie, csrf } = await sessionOf(url)
    const ok = { cookie, 'x-flowing-csrf': csrf, origin }
    expect((await post(url, 'dead-letters/purge', { ids: [letter.id] }, { cookie, origin })).status).toBe(403)
    expect(
      (await post(url, 'dead-letters/purge', { ids: [letter.id] }, { ...ok, 'x-flowing-csrf': `${csrf}x` })).status,
    ).toBe(403)
    expect(
      (await post(url, 'dead-letters/purge', { ids: [letter.id] }, { ...ok, origin: 'http://evil.example' })).body.error
        .code,
    ).toBe('csrf')
    const { origin: _o, ...noOrigin } = ok
    expect((await post(url, 'dead-letters/purge', { ids: [letter.id] }, noOrigin)).status).toBe(403)
    const other = await sessionOf(url) // another browser's token does not fit this cookie
    expect(
      (await post(url, 'dead-letters/purge', { ids: [letter.id] }, { ...ok, 'x-flowing-csrf': other.csrf })).status,
    ).toBe(403)
    const form = await fetch(`${url}api/loops/orders/dead-letters/purge`, {
      method: 'POST',
      headers: { ...ok, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'ids=1',
    })
    expect(form.status).toBe(415)
    expect(loop.deadLetters.size).toBe(1)
    const done = await post(url, 'dead-letters/purge', { ids: [letter.id] }, ok)
    expect(done).toEqual({ status: 200, body: { purged: 1 } })
  })

  it('ask authorize for each action by name; a throwing hook refuses', async () => {
    const asked: string[] = []
    const authorize = (_req: unknown, action: string) => {
      asked.push(action)
      if (action === 'purge') throw new Error('hook broke')
      return action !== 'resize'
    }
    const { url, loop, origin } = await setup({ authorize })
    const { cookie, csrf, body } = await sessionOf(url)
    expect(body['actions']).toMatchObject({ replay: true, purge: false, resize: false })
    const ok = { cookie, 'x-flowing-csrf': csrf, origin }
    expect((await post(url, 'workers', { workers: 9 }, ok)).status).toBe(403)
    const letter = await deadLetter(loop)
    expect((await post(url, 'dead-letters/purge', { ids: [letter.id] }, ok)).status).toBe(403)
    const replay = await post(url, 'dead-letters/replay', { ids: [letter.id] }, ok)
    expect(replay.status).toBe(200)
    expect(replay.body.replayed).toHaveLength(1)
    await loop.drain()
    expect(loop.deadLetters.size).toBe(1) // it failed again: a new letter
    expect(asked).toContain('view')
  })

  it('replays all matching a filter, cancels keyed delays, pauses and resizes; bad bodies get 400', async () => {
    const { url, loop, origin, handled } = await setup({ authorize: allowAll })
    const { cookie, csrf } = await sessionOf(url)
    const ok = { cookie, 'x-flowing-csrf': csrf, origin }
    loop.postDelayed('order.paid', { n: 7 }, 60_000, { jobKey: 'timeout:o-7' })
    const cancel = await post(url, 'jobs/cancel', { jobKey: 'timeout:o-7' }, ok)
    expect(cancel.body).toEqual({ result: 'cancelled' })
    expect((await post(url, 'jobs/cancel', {}, ok)).status).toBe(400)
    expect((await post(url, 'workers', { workers: 6 }, ok)).body).toEqual({ workers: 6 })
    expect((await post(url, 'workers', { workers: 0 }, ok)).status).toBe(400)
    expect((await post(url, 'types/pause', { type: 'order.paid' }, ok)).body).toEqual({ pausedTypes: ['order.paid'] })
    expect((await post(url, 'types/resume', { type: 'order.paid' }, ok)).body).toEqual({ pausedTypes: [] })
    expect((await post(url, 'types/pause', { type: 'no.such' }, ok)).status).toBe(409)
    expect((await post(url, 'pause', {}, ok)).body).toEqual({ state: 'paused' })
    expect((await post(url, 'resume', {}, ok)).body).toEqual({ state: 'running' })
    expect((await post(url, 'circuits/open', { type: 'order.paid' }, ok)).status).toBe(409) // no breaker: refused by the loop
    await deadLetter(loop, 'mail.send')
    await deadLetter(loop, HOSTILE_TYPE)
    const all = await post(url, 'dead-letters/replay', { all: true, filter: { type: 'mail.send' } }, ok)
    expect(all.body.replayed).toEqual([{ id: expect.any(String), type: 'mail.send' }])
    expect((await post(url, 'dead-letters/replay', {}, ok)).status).toBe(400)
    expect(handled).toEqual([])
  })
})

describe('live stream', () => {
  it('sends a tick a second while a page is open, resumes after Last-Event-ID, and costs nothing when closed', async () => {
    const { url, loop, dashboard } = await setup()
    const listeners = () => loop.events.listenerCount('posted') + loop.events.listenerCount('finished')
    expect(listeners()).toBe(0)
    const first = await readEvents(`${url}api/loops/orders/stream?view=keys`, 2)
    expect(first[0]?.data.overview.loop).toBe('orders')
    expect(first[0]?.data.view).toBe('keys')
    expect(first[0]?.data.data).toMatchObject({ busyKeys: 0, keys: [] })
    const lastId = first.at(-1)?.id as string
    await until(() => dashboard.pages === 0 || undefined)
    expect(listeners()).toBe(0)
    const resumed = await readEvents(`${url}api/loops/orders/stream`, 1, { 'last-event-id': lastId })
    expect(resumed[0]?.data.points.every((p: { t: number }) => p.t > Number(lastId))).toBe(true)
    await until(() => dashboard.pages === 0 || undefined)
    expect(listeners()).toBe(0)
    expect((await fetch(`${url}api/loops/orders/stream?view=bogus`)).status).toBe(400)
  })
})

function rawGet(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
    })
      .on('error', reject)
      .end()
  })
}

// The first `count` events of a stream, then the connection closed.
function readEvents(
  url: string,
  count: number,
  headers: Record<string, string> = {},
): Promise<{ id: string; data: Json }[]> {
  return new Promise((resolve, reject) => {
    const events: { id: string; data: Json }[] = []
    const req = request(url, { headers }, (res) => {
      let buffer = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        buffer += chunk
        let end = buffer.indexOf('\n\n')
        while (end >= 0) {
          const block = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const id = /^id: (.*)$/m.exec(block)?.[1]
          const data = /^data: (.*)$/m.exec(block)?.[1]
          if (id !== undefined && data !== undefined) events.push({ id, data: JSON.parse(data) })
          if (events.length === count) {
            req.destroy()
            resolve(events)
            return
          }
          end = buffer.indexOf('\n\n')
        }
      })
    })
    req.on('error', (e) => (events.length >= count ? undefined : reject(e)))
    req.end()
  })
}
