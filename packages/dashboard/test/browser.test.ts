/**
 * The dashboard in a real browser: Debian's chromium driven by playwright-core (no browser download;
 * CI installs chromium when it is missing). The last test takes the screenshots of docs/images/dashboard/.
 */
import { mkdirSync } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { fileURLToPath } from 'node:url'
import { type Browser, chromium, type Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { DashboardOptions } from '../src/index.js'
import { demoLoop, HOSTILE_TEXT, HOSTILE_TYPE, served, until } from './fixture.js'
import { showcase } from './showcase.js'

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium'
let browser: Browser
const closers: (() => Promise<void>)[] = []

beforeAll(async () => {
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
}, 60_000)
afterAll(async () => browser?.close())
afterEach(async () => {
  for (const close of closers.splice(0)) await close()
})

type Setup = Awaited<ReturnType<typeof open>>

// A demo loop, a dashboard over it, and a page on it whose dialogs and errors are recorded.
async function open(options: Partial<DashboardOptions> = {}, path = '') {
  const demo = demoLoop()
  const s = await served({ loops: { orders: demo.loop }, ...options })
  const page = await browser.newPage()
  const dialogs: string[] = []
  const errors: string[] = []
  page.on('dialog', (d) => {
    dialogs.push(d.message())
    void d.dismiss()
  })
  page.on('pageerror', (e) => errors.push(e.message))
  closers.push(async () => {
    await page.close()
    await s.close()
    await demo.loop.stop()
  })
  await page.goto(`${s.url}${path}`)
  await page.getByTestId('live').filter({ hasText: 'live' }).waitFor()
  return { ...demo, ...s, page, dialogs, errors }
}

const allowAll = () => true
const pwned = (page: Page) => page.evaluate(() => (globalThis as { __pwned?: unknown }).__pwned)

async function deadLetter(t: Setup, type: string, payload: Record<string, unknown>) {
  const before = t.loop.deadLetters.size
  t.loop.post(type, { n: 1, ...payload })
  await t.loop.drain()
  expect(t.loop.deadLetters.size).toBe(before + 1)
}

describe('dashboard in a browser', () => {
  it('updates the overview live while messages flow, with charts', async () => {
    const t = await open()
    const total = t.page.getByTestId('succeeded-total')
    await expect.poll(() => total.textContent()).toContain('0')
    for (let i = 0; i < 25; i++) t.loop.post('order.paid', { n: i }, { key: `k${i % 3}` })
    await t.loop.drain()
    await expect.poll(() => total.textContent()).toContain('25')
    await expect.poll(() => t.page.locator('[data-testid="chart"] canvas').count()).toBe(3)
    await expect.poll(() => t.page.getByTestId('types').textContent()).toContain('order.paid')
    expect(t.errors).toEqual([])
  })

  it('inspects a dead letter and replays it: the replay runs', async () => {
    const t = await open({ authorize: allowAll, payloads: 'shown' })
    const relay = { down: true }
    t.loop.on(
      'relay.send',
      async (m) => {
        if (relay.down)
          throw new Error(`relay down for ${String(m.payload.text)}`, { cause: new Error('ECONNREFUSED') })
        t.handled.push(`relay.send:${m.payload.n}`)
      },
      { retry: { maxAttempts: 2, baseMs: 1 } },
    )
    await deadLetter(t, 'relay.send', { text: 'hello' })
    await t.page.getByRole('link', { name: 'Dead letters' }).click()
    await t.page.getByTestId('letters').getByText('relay.send').click()
    await expect.poll(() => t.page.getByTestId('letter-payload').textContent()).toContain('"text": "hello"')
    const error = await t.page.getByTestId('letter').textContent()
    expect(error).toContain('relay down for hello')
    expect(error).toContain('ECONNREFUSED') // the cause
    expect(error).toContain('at ') // the stack
    relay.down = false
    await t.page.getByTestId('replay-one').click()
    await until(() => t.handled.includes('relay.send:1'))
    await expect.poll(() => t.page.locator('#notice').textContent()).toContain('Replayed 1')
    expect(t.loop.deadLetters.size).toBe(0)
  })

  it('asks before a purge, and purges only when confirmed', async () => {
    const t = await open({ authorize: allowAll })
    await deadLetter(t, 'mail.send', { fail: true })
    await t.page.getByRole('link', { name: 'Dead letters' }).click()
    await t.page.getByTestId('letters').getByText('mail.send').click()
    await t.page.getByTestId('purge-one').click()
    await t.page.getByTestId('confirm').waitFor()
    await t.page.getByTestId('confirm-no').click()
    expect(t.loop.deadLetters.size).toBe(1)
    await t.page.getByTestId('purge-all').click()
    await expect.poll(() => t.page.getByTestId('confirm').textContent()).toContain('cannot be undone')
    await t.page.getByTestId('confirm-yes').click()
    await until(() => t.loop.deadLetters.size === 0)
  })

  it('refuses actions without authorization (HTTP 403, no controls) and without the CSRF token', async () => {
    const authorize = (_req: IncomingMessage, action: string) => action === 'view' || action === 'cancel'
    const t = await open({ authorize })
    await deadLetter(t, 'mail.send', { fail: true })
    await t.page.getByRole('link', { name: 'Dead letters' }).click()
    await t.page.getByTestId('letters').getByText('mail.send').click()
    await t.page.getByTestId('letter-error').waitFor()
    expect(await t.page.getByRole('button', { name: /Replay|Purge/ }).count()).toBe(0)
    const id = t.loop.deadLetters.list()[0]?.id
    const statuses = await t.page.evaluate(async (id) => {
      const session = (await (await fetch('api/session')).json()) as { csrf: string }
      const send = (headers: Record<string, string>) =>
        fetch('api/loops/orders/dead-letters/replay', {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify({ ids: [id] }),
        })
      const refused = await send({ 'x-flowing-csrf': session.csrf })
      const cancelNoToken = await fetch('api/loops/orders/jobs/cancel', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"jobKey":"k"}',
      })
      const cancelToken = await fetch('api/loops/orders/jobs/cancel', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-flowing-csrf': session.csrf },
        body: '{"jobKey":"k"}',
      })
      const answer = (await refused.json()) as { error: { message: string } }
      return [refused.status, answer.error.message, cancelNoToken.status, cancelToken.status]
    }, id)
    expect(statuses).toEqual([403, 'not allowed to replay', 403, 200])
    expect(t.loop.deadLetters.size).toBe(1)
  })

  it('renders a hostile payload, error and type name as text, and runs nothing', async () => {
    const t = await open({ authorize: allowAll, payloads: 'shown' })
    await deadLetter(t, HOSTILE_TYPE, { text: HOSTILE_TEXT })
    await t.page.getByRole('link', { name: 'Dead letters' }).click()
    await t.page.getByTestId('letters').getByText(HOSTILE_TYPE).click()
    await expect.poll(() => t.page.getByTestId('letter-payload').textContent()).toContain(HOSTILE_TEXT.slice(0, 20))
    expect(await t.page.getByTestId('letters').textContent()).toContain(HOSTILE_TYPE)
    expect(await t.page.getByTestId('letter-error').textContent()).toContain(HOSTILE_TEXT)
    await t.page.getByRole('link', { name: 'Overview' }).click()
    // The overview's stream replaces the dead letters' (counts are kept while a page watches).
    await t.page.getByTestId('succeeded-total').waitFor()
    await until(() => t.dashboard.pages === 1)
    t.loop.post(HOSTILE_TYPE, { n: 2, text: HOSTILE_TEXT })
    await expect.poll(() => t.page.getByTestId('types').textContent()).toContain(HOSTILE_TYPE)
    expect(await t.page.locator('main img, main script').count()).toBe(0)
    expect(await pwned(t.page)).toBeUndefined()
    expect(t.dialogs).toEqual([])
  })

  it('resumes a dropped live stream from its last event', async () => {
    const t = await open()
    const lastIds: (string | undefined)[] = []
    const handler = t.dashboard.handler
    t.server.removeAllListeners('request')
    t.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      if (req.url?.includes('/stream')) lastIds.push(req.headers['last-event-id'] as string | undefined)
      handler(req, res)
    })
    await expect.poll(() => t.page.getByTestId('succeeded-total').textContent()).toContain('0')
    t.server.closeAllConnections() // the stream drops
    await t.page.getByTestId('live').filter({ hasText: 'reconnecting' }).waitFor()
    await t.page.getByTestId('live').filter({ hasText: 'live' }).waitFor({ timeout: 30_000 })
    expect(lastIds.at(-1)).toMatch(/^\d+$/)
    for (let i = 0; i < 5; i++) t.loop.post('order.paid', { n: i })
    await expect.poll(() => t.page.getByTestId('succeeded-total').textContent()).toContain('5')
  })

  it('pauses a message type from the overview: its messages wait until it resumes', async () => {
    const t = await open({ authorize: allowAll })
    await until(() => t.dashboard.pages === 1)
    for (let i = 0; i < 3; i++) t.loop.post('order.paid', { n: i })
    await t.loop.drain()
    await t.page.getByTestId('pause-type').first().click()
    await expect.poll(() => t.loop.controls.pausedTypes()).toEqual(['order.paid'])
    await t.page.getByTestId('paused-types').waitFor()
    t.loop.post('order.paid', { n: 9 })
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(t.handled).not.toContain('order.paid:9')
    expect(t.loop.metrics().gauges.held).toBe(1)
    await t.page.getByTestId('resume-type').click()
    await until(() => t.handled.includes('order.paid:9'))
    expect(t.loop.controls.pausedTypes()).toEqual([])
  })

  it("shows a message's timeline, and through its trace the follow-ups it posted", async () => {
    const t = await open()
    t.loop.on('order.placed', async (_m, ctx) => {
      ctx.post('order.paid', { n: 1 }, { key: 'o-1' })
      ctx.post('mail.send', { n: 2 })
    })
    const parent = t.loop.post('order.placed', { n: 0 }, { key: 'o-1' })
    await t.loop.drain()
    await t.page.goto(`${t.url}#/orders/timeline?id=${encodeURIComponent(parent.id)}`)
    await expect.poll(() => t.page.getByTestId('timeline').textContent()).toContain('succeeded')
    expect(await t.page.getByTestId('transitions').count()).toBe(1)
    await t.page.getByTestId('trace-link').click()
    await expect.poll(() => t.page.getByTestId('transitions').count()).toBe(3)
    const text = await t.page.getByTestId('timeline').textContent()
    for (const type of ['order.placed', 'order.paid', 'mail.send']) expect(text).toContain(type)
  })

  it('shows no action controls in read-only mode', async () => {
    const t = await open({ payloads: 'shown' })
    await deadLetter(t, 'mail.send', { fail: true })
    expect(await t.page.getByTestId('mode').textContent()).toBe('read-only')
    expect(await t.page.getByRole('button').count()).toBe(0)
    await t.page.getByRole('link', { name: 'Dead letters' }).click()
    await t.page.getByTestId('letters').getByText('mail.send').click()
    await t.page.getByTestId('letter-error').waitFor()
    expect(await t.page.getByRole('button', { name: /Replay|Purge|Pause|Resume|Cancel|Resize|Close/ }).count()).toBe(0)
    expect(await t.page.locator('input[type="checkbox"]').count()).toBe(0)
  })

  it('takes a screenshot of every view from a demo workload (docs/images/dashboard/)', async () => {
    const demo = showcase()
    const threads = { invoices: demo.pool }
    const s = await served({ loops: { shop: demo.loop }, authorize: allowAll, payloads: 'shown', threads })
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    closers.push(async () => {
      await page.close()
      await s.close()
      await demo.stop()
    })
    const dir = fileURLToPath(new URL('../../../docs/images/dashboard/', import.meta.url))
    mkdirSync(dir, { recursive: true })
    await page.goto(s.url)
    await page.getByTestId('live').filter({ hasText: 'live' }).waitFor()
    await page.waitForTimeout(4_000) // a few seconds of charts
    await page.screenshot({ path: `${dir}overview.png`, fullPage: true })
    const views: [string, string, string][] = [
      ['Keys and groups', 'keys', 'customer-42'],
      ['Breakers and limits', 'circuits', 'payment.charge'],
      ['Delayed and scheduled', 'schedules', 'nightly-report'],
      ['Dead letters', 'letters', 'mail.send'],
      ['Threads', 'threads', 'invoices'],
    ]
    for (const [tab, testid, text] of views) {
      await page.getByRole('link', { name: tab }).click()
      await expect.poll(() => page.getByTestId(testid).textContent()).toContain(text)
      if (testid === 'letters') {
        await page
          .getByTestId('letters')
          .getByText('payment.charge')
          .first()
          .click()
          .catch(() => {})
        await page.getByTestId('letters').getByText('mail.send').first().click()
        await page.getByTestId('letter-error').first().waitFor()
      }
      await page.screenshot({ path: `${dir}${testid === 'letters' ? 'dead-letters' : testid}.png`, fullPage: true })
    }
    const blocked = demo.loop.inspect().keys.find((l) => l.key === 'customer-42')
    await page.goto(`${s.url}#/shop/timeline?key=customer-42`)
    await expect
      .poll(() => page.getByTestId('timeline').textContent())
      .toContain(blocked?.holder?.id ?? 'invoice.render')
    await page.screenshot({ path: `${dir}timeline.png`, fullPage: true })
    expect(await pwned(page)).toBeUndefined()
  })
})
