/**
 * Beyond the transport contract: a distributed loop's stop must not delete shared work — what it
 * held unfinished, running or waiting in its local queue, goes back to the server for another process.
 */
import { expect, it } from 'vitest'
import { createNatsLoop } from '../src/index.js'
import { describeNats, useNatsServer } from './server.js'

interface Messages {
  step: { n: number }
}

describeNats('NatsLoop.stop({ deadlineMs: 0 })', () => {
  const server = useNatsServer()

  // Regression: the local loop's stop cancels what waits in its queue; a cancelled delivery must be
  // handed back, never acknowledged (the work-queue stream would delete it and no process run it).
  it('hands back the messages it held in its local queue, so another process runs them', async () => {
    const options = { servers: server().url, name: 'nodrain', partitions: 4, workers: 1, ackWaitMs: 1_000 }
    const a = await createNatsLoop<Messages>({ ...options, loop: { logger: false } })
    a.on('step', () => new Promise<void>(() => {})) // never finishes
    await a.start()
    for (let n = 0; n < 8; n++) await a.post('step', { n }, { key: `k${n}` })
    const deadline = Date.now() + 5_000
    while (a.metrics().held < 8 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
    expect(a.metrics()).toMatchObject({ held: 8, partitions: 4 }) // it owns all 4: 1 running, 7 queued locally
    await a.stop({ deadlineMs: 0 })
    const b = await createNatsLoop<Messages>({ ...options, loop: { logger: false } })
    const seen: number[] = []
    b.on('step', (m) => void seen.push(m.payload.n))
    await b.start()
    await b.drain()
    await b.stop()
    expect(seen.sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
  })
})
