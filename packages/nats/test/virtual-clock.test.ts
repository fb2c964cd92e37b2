/**
 * A distributed loop on a virtual clock (option `clock`) against a private server: every timer and
 * reading of the transport — the lease heartbeat, the delay mover's due check, the wall-clock stamps —
 * goes through the clock, so what needed real seconds runs on virtual ones. The server keeps its own
 * time; the tests drive the clock while it answers.
 */
import { VirtualClock } from '@flowing/core'
import { jetstreamManager } from '@nats-io/jetstream'
import { afterEach, describe, expect, it } from 'vitest'
import { createNatsLoop, type NatsLoop, type NatsLoopOptions } from '../src/index.js'
import { describeNats, useConnections, useNatsServer } from './server.js'
import { drive } from './virtual-time.js'

interface Messages {
  job: { n: number }
}

// A wall-clock epoch no real clock shows: a stamp taken from `Date.now()` cannot pass for the clock's.
const EPOCH = 1_000_000_000

describeNats('NatsLoop on a virtual clock', () => {
  const server = useNatsServer()
  const connection = useConnections(server)
  const open: { loop: NatsLoop<Messages>; clock: VirtualClock }[] = []
  let names = 0
  const make = async (o: Partial<NatsLoopOptions> = {}) => {
    const clock = new VirtualClock(0, EPOCH)
    const name = `virtual${names++}`
    const loop = await createNatsLoop<Messages>({ servers: server().url, name, partitions: 1, clock, ...o })
    open.push({ loop, clock })
    return { loop, clock, name }
  }
  afterEach(async () => {
    await Promise.all(open.splice(0).map(({ loop, clock }) => drive(clock, loop.stop({ deadlineMs: 0 }))))
  })

  describe('leases', () => {
    it('keeps the lease of a handler that runs for many leases: the heartbeat extends it on the clock', async () => {
      const { loop, clock } = await make({ ackWaitMs: 1_000, leaseMarginMs: 300 }) // a lease of 700 ms
      loop.on('job', () => clock.sleep(10_000)) // 14 leases
      await loop.start()
      await loop.post('job', { n: 0 })
      await drive(clock, loop.drain(), { stepMs: 50 })
      expect(clock.now()).toBeGreaterThanOrEqual(10_000)
      expect(loop.metrics()).toMatchObject({ acked: 1, fenced: 0, leasesLost: 0, redelivered: 0 })
    })
  })

  describe('postDelayed()', () => {
    it('moves a delayed message once the clock says it is due, never a millisecond earlier', async () => {
      const { loop, clock, name } = await make()
      const started: number[] = []
      loop.on('job', () => void started.push(clock.now()))
      const at = clock.now()
      await loop.postDelayed('job', { n: 0 }, 60_000)
      await clock.advance(59_999)
      await loop.start()
      // The mover hands it back for the 1 ms it still has to wait, again and again: virtual time stands.
      const jsm = await jetstreamManager(await connection())
      const looked = async () => (await jsm.consumers.info(`${name}-delayed`, `${name}-delays`)).delivered.consumer_seq
      while ((await looked()) < 3) await new Promise((resolve) => setTimeout(resolve, 5))
      expect(loop.metrics().delayedMoved).toBe(0)
      expect(started).toEqual([])
      await clock.advance(1)
      await drive(clock, loop.drain())
      expect(loop.metrics().delayedMoved).toBe(1)
      expect(started).toHaveLength(1)
      expect((started[0] ?? 0) - at).toBeGreaterThanOrEqual(60_000)
    })
  })

  describe('wall-clock stamps', () => {
    it("stamps a post's posted-at header and a dead letter's atEpochMs with the clock's wall time", async () => {
      const { loop, clock, name } = await make({ loop: { retry: { maxAttempts: 1 }, logger: false } })
      await clock.advance(5_000)
      await loop.post('job', { n: 0 })
      const stored = await (await jetstreamManager(await connection())).streams.getMessage(`${name}-work-0`, { seq: 1 })
      expect(stored?.json<{ postedAtEpochMs: number }>().postedAtEpochMs).toBe(EPOCH + 5_000)
      loop.on('job', () => {
        throw new Error('broken downstream')
      })
      await loop.start()
      await drive(clock, loop.drain())
      const [letter] = await loop.deadLetters.list()
      expect(letter?.atEpochMs).toBeGreaterThanOrEqual(EPOCH + 5_000)
      expect(letter?.atEpochMs).toBeLessThanOrEqual(clock.wallNow())
    })
  })

  describe('options', () => {
    it('refuses a clock that is not one, and a clock given to the local loop instead', async () => {
      const url = server().url
      const bad = await createNatsLoop({ servers: url, clock: { now: () => 0 } as never }).catch((e: unknown) => e)
      expect(bad).toMatchObject({ code: 'ERR_FLOWING_INVALID_ARGUMENT', argument: 'options.clock.setTimeout' })
      const local = await createNatsLoop({ servers: url, loop: { clock: new VirtualClock() } as never }).catch(
        (e: unknown) => e,
      )
      expect(local).toMatchObject({ code: 'ERR_FLOWING_INVALID_ARGUMENT', argument: 'options.loop.clock' })
      expect((local as Error).message).toMatch(/; give `clock` at the top level$/)
    })
  })
})
