/**
 * The server of a loop killed (`kill -9`) under load and restarted on the same store. It can come back
 * holding messages that had run and been acknowledged (it had not yet written their removal down), and
 * without deliveries it had made just before (lost on the way). Regressions: `drain()` waited for the
 * former for ever and `fill()` counted them; the latter waited out the ack wait, and what followed them
 * on their keys ran first.
 */
import { afterEach, expect, it } from 'vitest'
import { createNatsLoop, type NatsLoop } from '../src/index.js'
import { describeNats, useNatsServer } from './server.js'
import { until } from './until.js'

interface Messages {
  job: { n: number }
}

const N = 3000
const KEYS = 50
const ACK_WAIT_MS = 30_000

describeNats('a server killed under load and restarted', () => {
  const server = useNatsServer()
  const open: NatsLoop<Messages>[] = []
  afterEach(async () => {
    await Promise.all(open.splice(0).map((l) => l.stop({ deadlineMs: 0 })))
  })

  it('runs the rest at once and in key order, then drains: acknowledged messages it kept are removed', async () => {
    const loop = await createNatsLoop<Messages>({
      servers: server().url,
      name: 'crash',
      partitions: 4,
      ackWaitMs: ACK_WAIT_MS,
      onError: () => {}, // requests time out while the server is away
    })
    open.push(loop)
    const firstRuns: number[][] = Array.from({ length: KEYS }, () => [])
    const ran = new Set<number>()
    loop.on('job', async (m) => {
      if (!ran.has(m.payload.n)) firstRuns[m.payload.n % KEYS]?.push(m.payload.n)
      ran.add(m.payload.n)
      await new Promise((r) => setImmediate(r))
    })
    await Promise.all(Array.from({ length: N }, (_, n) => loop.post('job', { n }, { key: `k${n % KEYS}` })))
    await loop.start()
    await until(() => ran.size >= N / 3, 30_000, 'a third run')
    server().kill9()
    await server().restart()
    // Well within the ack wait: nothing the server handed out before the crash waits it out.
    await until(() => ran.size === N, ACK_WAIT_MS / 3, 'every message run after the restart')
    for (const runs of firstRuns) expect(runs).toEqual([...runs].sort((a, b) => a - b))
    await until(() => loop.metrics().held === 0, 10_000, 'nothing held')
    let drained = false
    void loop.drain().then(() => {
      drained = true
    })
    await until(() => drained, ACK_WAIT_MS + 15_000, 'drain()') // it never resolved before
    expect((await loop.fill()).messages).toBe(0)
  }, 120_000)
})
