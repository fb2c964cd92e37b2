/**
 * Views that appear when their feature is in use: a `@flowing/threads` pool, and a `@flowing/nats`
 * loop on a private nats-server (its partitions, its local loop).
 */
import { NonRetryableError } from '@flowing/core'
import { createNatsLoop } from '@flowing/nats'
import { ThreadPool } from '@flowing/threads'
import { afterEach, expect, it } from 'vitest'
import { describeNats, useNatsServer } from '../../nats/test/server.js'
import { demoLoop, served, sessionOf, until } from './fixture.js'

const closers: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const close of closers.splice(0)) await close()
})

// biome-ignore lint/suspicious/noExplicitAny: the tests read the API's JSON
type Json = any
const getJson = async (url: string): Promise<Json> => (await fetch(url)).json()

it('shows a thread pool once the app names it, with its stats', async () => {
  const { loop } = demoLoop()
  const pool = new ThreadPool({ minThreads: 1, maxThreads: 1 })
  const s = await served({ loops: { orders: loop }, threads: { render: pool } })
  closers.push(async () => {
    await s.close()
    await pool.close()
    await loop.stop()
  })
  const [listed] = await getJson(`${s.url}api/loops`)
  expect(listed.views).toContain('threads')
  const pools = await getJson(`${s.url}api/loops/orders/threads`)
  expect(pools).toEqual([
    { name: 'render', stats: expect.objectContaining({ threads: expect.any(Number), queued: 0 }) },
  ])
})

describeNats('a NATS loop', () => {
  const server = useNatsServer()

  it('shows its local loop and how many partitions this process owns', async () => {
    const nats = await createNatsLoop<{ step: { n: number } }>({ servers: server().url, name: 'board', partitions: 4 })
    const handled: number[] = []
    nats.on('step', async (m) => {
      handled.push(m.payload.n)
    })
    nats.start()
    const s = await served({ loops: { board: nats } })
    closers.push(async () => {
      await s.close()
      await nats.stop()
    })
    for (let n = 0; n < 5; n++) await nats.post('step', { n }, { key: `k${n}` })
    await until(() => handled.length === 5)
    const [listed] = await getJson(`${s.url}api/loops`)
    expect(listed).toMatchObject({ name: 'board', kind: 'nats', views: expect.arrayContaining(['nats', 'keys']) })
    const view = await until(async () => {
      const v = await getJson(`${s.url}api/loops/board/nats`)
      return v.partitions === 4 ? v : undefined
    })
    expect(view.serverVersion).toMatch(/^\d+\.\d+/)
    const overview = await getJson(`${s.url}api/loops/board/overview`)
    expect(overview.counters.succeeded).toBe(5)
  })

  it('lists, replays and purges the dead letters every process shares (the stream), replays into a partition', async () => {
    const nats = await createNatsLoop<{ charge: { n: number } }>({
      servers: server().url,
      name: 'letters',
      partitions: 2,
    })
    let down = true
    const charged: number[] = []
    nats.on('charge', async (m) => {
      if (down) throw new NonRetryableError(`provider down for ${m.payload.n}`)
      charged.push(m.payload.n)
    })
    nats.start()
    const s = await served({ loops: { letters: nats }, authorize: () => true })
    closers.push(async () => {
      await s.close()
      await nats.stop()
    })
    for (const n of [1, 2]) await nats.post('charge', { n }, { key: `o-${n}` })
    const listed = await until(async () => {
      const l = await getJson(`${s.url}api/loops/letters/dead-letters`)
      return l.total === 2 ? l : undefined
    })
    expect(listed.letters.map((l: Json) => l.error.message).sort()).toEqual([
      'provider down for 1',
      'provider down for 2',
    ])
    const one = await getJson(`${s.url}api/loops/letters/dead-letters/${listed.letters[0].id}`)
    expect(one.letter.type).toBe('charge')
    const { cookie, csrf } = await sessionOf(s.url)
    const headers = { 'content-type': 'application/json', cookie, 'x-flowing-csrf': csrf, origin: s.origin }
    down = false
    const replayed = await fetch(`${s.url}api/loops/letters/dead-letters/replay`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ ids: [listed.letters[0].id] }),
    })
    expect(((await replayed.json()) as Json).replayed).toEqual([{ id: expect.any(String), type: 'charge' }])
    await until(() => charged.length === 1)
    const purged = await fetch(`${s.url}api/loops/letters/dead-letters/purge`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ all: true, filter: { type: 'charge' } }),
    })
    expect(await purged.json()).toEqual({ purged: 1 })
    expect((await getJson(`${s.url}api/loops/letters/dead-letters`)).total).toBe(0)
  })
})
