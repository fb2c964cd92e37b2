/**
 * Leases and hand-backs between two loops sharing one name on a private server: a message whose process
 * froze past the lease (on a virtual clock) is not acknowledged by that process (the server hands the message to
 * the other, and the key's next message waits for that), and `stop()` hands what a process still holds
 * back at once, a backing-off retry after what it still had to wait.
 */
import { RetryableError } from '@flowing/core'
import { afterEach, expect, it } from 'vitest'
import { createNatsLoop, type NatsLoop, type NatsLoopOptions } from '../src/index.js'
import { describeNats, useNatsServer } from './server.js'
import { drive, driveUntil, FreezableClock } from './virtual-time.js'

interface Messages {
  job: { n: number }
}

describeNats('leases and hand-backs (two loops, one name)', () => {
  const server = useNatsServer()
  const open: NatsLoop<Messages>[] = []
  let names = 0
  const clocks: FreezableClock[] = []
  afterEach(async () => {
    const stopped = Promise.all(open.splice(0).map((l) => l.stop({ deadlineMs: 0 })))
    const clock = clocks.pop()
    await (clock === undefined ? stopped : drive(clock, stopped))
  })
  const pair = async (o: Partial<NatsLoopOptions>): Promise<[NatsLoop<Messages>, NatsLoop<Messages>]> => {
    const name = `lease${names++}`
    if (o.clock instanceof FreezableClock) clocks.push(o.clock)
    const make = () => createNatsLoop<Messages>({ servers: server().url, name, partitions: 1, ...o })
    const loops = [await make(), await make()] as const
    open.push(...loops)
    return [loops[0], loops[1]]
  }

  // On a virtual clock: the freeze moves the clock on without firing a timer, as a blocked event loop
  // or a stopped process looks to the lease; the server's ack_wait stays real.
  it('refuses to ack after a frozen process outlived the lease; the other process runs it', async () => {
    const clock = new FreezableClock()
    const [a, b] = await pair({ ackWaitMs: 1000, leaseMarginMs: 300, clock })
    const runs: string[] = []
    let thaw = () => {}
    const thawed = new Promise<void>((resolve) => {
      thaw = resolve
    })
    a.on('job', async (m) => {
      runs.push(`a${m.payload.n}`)
      if (runs.length === 1) await thawed
    })
    await a.start()
    await a.post('job', { n: 0 }, { key: 'k' })
    await a.post('job', { n: 1 }, { key: 'k' })
    await driveUntil(clock, () => runs.length === 1) // a holds message 0
    clock.freeze(1600) // past the lease (700 ms)
    thaw()
    b.on('job', (m) => void runs.push(`b${m.payload.n}`))
    await b.start()
    await drive(clock, b.drain())
    await drive(clock, a.drain())
    expect(a.metrics().fenced).toBeGreaterThanOrEqual(1) // its stale ack (and what it held of the partition when it moved)
    expect(a.metrics().leasesLost).toBe(1) // the partition then starts over: 1, behind it, is dropped unrun
    // 0 ran in a (not acknowledged); then either it ran again elsewhere, or — handed back to a, which
    // had finished it — a acknowledged it without running it twice. 1 only after that.
    expect(runs[0]).toBe('a0')
    const second = runs.findIndex((r, i) => i > 0 && r.endsWith('0'))
    if (second === -1) expect(a.metrics().reAcked).toBeGreaterThanOrEqual(1)
    else expect(runs[second]).toBe('b0')
    expect(runs.findIndex((r) => r.endsWith('1'))).toBeGreaterThan(Math.max(second, 0))
  }, 20_000)

  // Regression: a thawed process fired the retry's timer before its heartbeat saw the lapse, and ran
  // the attempt although another process had the message already.
  it('starts no further attempt of a message backing off when its lease lapsed in a freeze', async () => {
    const clock = new FreezableClock()
    const retry = { maxAttempts: 5, baseMs: 1, jitter: 0 }
    const [a] = await pair({ ackWaitMs: 1000, leaseMarginMs: 300, clock, loop: { retry, logger: false } })
    const runs: number[] = []
    a.on('job', (_m, ctx) => {
      runs.push(ctx.attempt)
      if (runs.length === 1) throw new RetryableError('later')
    })
    await a.start()
    await a.post('job', { n: 0 }, { key: 'k' })
    await driveUntil(clock, () => runs.length === 1) // the first attempt failed: its retry is due at once
    clock.freeze(1600) // past the lease (700 ms), before the retry's timer fires
    await clock.advance(10)
    expect(runs).toEqual([1]) // the retry did not start: the message is the server's again
    expect(a.metrics().leasesLost).toBe(1)
    await drive(clock, a.drain())
    // It ran again only as the server's redelivery (the partition started over), from its first attempt.
    expect(runs).toEqual([1, 1])
    expect(a.metrics().received).toBe(2)
  }, 20_000)

  it('stop() hands a backing-off message back; the other process retries it after the rest of its wait', async () => {
    const [a, b] = await pair({ loop: { retry: { maxAttempts: 5, baseMs: 600, jitter: 0 }, logger: false } })
    const runs: { who: string; at: number }[] = []
    a.on('job', () => {
      runs.push({ who: 'a', at: Date.now() })
      throw new RetryableError('later')
    })
    b.on('job', () => void runs.push({ who: 'b', at: Date.now() }))
    await a.start()
    await a.post('job', { n: 0 }, { key: 'k' })
    while (runs.length === 0) await new Promise((r) => setTimeout(r, 10))
    const report = await a.stop({ deadlineMs: 0 })
    expect(report.handedBack).toBe(1)
    await b.start()
    await b.drain()
    expect(runs.map((r) => r.who)).toEqual(['a', 'b'])
    const gap = (runs[1]?.at ?? 0) - (runs[0]?.at ?? 0)
    expect(gap).toBeGreaterThanOrEqual(450) // not at once: the retry's back-off carried over
  }, 20_000)
})
