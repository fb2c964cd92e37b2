/**
 * Views that appear when their feature is in use: a `@flowing/threads` pool, and a `@flowing/nats`
 * loop on a private nats-server (its partitions, its local loop).
 */
import { createNatsLoop } from '@flowing/nats'
import { ThreadPool } from '@flowing/threads'
import { afterEach, expect, it } from 'vitest'
import { describeNats, useNatsServer } from '../../nats/test/server.js'
import { demoLoop, served, until } from './fixture.js'

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
})
