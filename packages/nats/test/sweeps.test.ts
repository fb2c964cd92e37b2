/**
 * The owner's audit of a partition against what the server says of its consumer (`sweeps.ts`), on
 * fakes of the server's answers: in particular a message a restarted server kept above the ack floor
 * that its idle consumer counts as delivered and acknowledged — it would stay in the stream for ever
 * (`drain()` never resolving) unless the partition starts over and its new consumer hands it out again.
 */
import { VirtualClock } from '@flowing/core'
import type { ConsumerMessages, JetStreamManager } from '@nats-io/jetstream'
import { describe, expect, it } from 'vitest'
import { newCounters, newOwned, type Owned } from '../src/internal/runner-parts.js'
import { audit, auditOnce, type SweepHost } from '../src/internal/sweeps.js'
import type { ConsumerState, Topology } from '../src/internal/topology.js'

const IDLE: ConsumerState = { ackFloor: 100, delivered: 60, deliveredUpTo: 120, ackPending: 0, pending: 0 }

function setup(state: ConsumerState, stored: number | undefined, replicated = false) {
  const calls = { startOver: 0, removed: [] as number[], lookedAfter: [] as number[] }
  const topology = {
    replicated,
    consumerState: async () => state,
    removeAcked: async (_jsm: unknown, _p: number, floor: number) => {
      calls.removed.push(floor)
      return 1
    },
    firstStoredAfter: async (_jsm: unknown, _p: number, after: number) => {
      calls.lookedAfter.push(after)
      return stored !== undefined && stored > after ? stored : undefined
    },
  } as unknown as Topology
  const iterator = { stop() {} } as unknown as ConsumerMessages
  const o: Owned = newOwned(0, 7, { crashes: new Map(), waits: new Map() }, iterator, true)
  o.delivered = state.delivered
  const host: SweepHost = {
    jsm: {} as JetStreamManager,
    topology,
    clock: new VirtualClock(),
    counters: newCounters(),
    owns: (x) => x === o,
    startOver: () => {
      calls.startOver++
    },
  }
  return { o, host, calls }
}

describe('what the server kept below the ack floor', () => {
  it('is removed up to the floor once the partition is idle', async () => {
    const { o, host, calls } = setup(IDLE, undefined)
    await audit(o, host)
    expect(calls.removed).toEqual([100])
    expect(o.removedUpTo).toBe(100)
  })

  it('after a reconnection, while the partition works, is removed only below the lowest message held here', async () => {
    // The floor of a consumer whose leader changed can cover deliveries never acknowledged.
    const { o, host, calls } = setup({ ...IDLE, ackPending: 2 }, undefined)
    o.held.add({ jm: { seq: 90 } } as never)
    o.held.add({ jm: { seq: 60 } } as never)
    await auditOnce(o, host, 120) // one audit of the sweep after a reconnection (which runs on a timer)
    expect(calls.removed).toEqual([59])
  })
})

describe('on a cluster, what the server kept below the ack floor', () => {
  // The floor of a consumer whose leader changed can cover deliveries never acknowledged: removing by
  // it lost messages (the 3-node suite, under load).
  it('is never removed: the partition starts over, once, and its new consumer hands it out again', async () => {
    const { o, host, calls } = setup(IDLE, 40, true)
    await audit(o, host)
    expect(calls.removed).toEqual([])
    expect(calls.startOver).toBe(1)
    o.restarting = false
    await audit(o, host) // still kept after the start over: left alone (no start over every audit)
    expect(calls.startOver).toBe(1)
  })

  it('with nothing kept there, moves on without a removal', async () => {
    const { o, host, calls } = setup(IDLE, 110, true) // stored above the floor only (and not delivered)
    await audit(o, host)
    expect(calls.removed).toEqual([])
    expect(o.removedUpTo).toBe(100)
  })
})

describe('the audit of an idle partition', () => {
  it('starts the partition over when a message its consumer counts delivered and acknowledged is still stored', async () => {
    const { o, host, calls } = setup(IDLE, 110)
    await audit(o, host)
    expect(calls.removed).toEqual([100]) // below the floor: removed first
    expect(calls.lookedAfter).toEqual([100])
    expect(calls.startOver).toBe(1)
  })

  it('leaves it alone when nothing is stored above the floor', async () => {
    const { o, host, calls } = setup(IDLE, undefined)
    await audit(o, host)
    expect(calls.startOver).toBe(0)
  })

  it('leaves it alone when the stored message came after the consumer’s last delivery (published since)', async () => {
    const { o, host, calls } = setup(IDLE, 121)
    await audit(o, host)
    expect(calls.startOver).toBe(0)
  })

  it('does not look while the partition has work: messages pending, unacknowledged or held', async () => {
    for (const state of [
      { ...IDLE, pending: 1 },
      { ...IDLE, ackPending: 1 },
    ]) {
      const { o, host, calls } = setup(state, 110)
      await audit(o, host)
      expect(calls.lookedAfter).toEqual([])
      expect(calls.startOver).toBe(0)
    }
  })

  it('does not start over a partition that is no longer owned by the time the answer comes', async () => {
    const { o, host, calls } = setup(IDLE, 110)
    const lost: SweepHost = { ...host, owns: () => calls.lookedAfter.length === 0 }
    await audit(o, lost)
    expect(calls.startOver).toBe(0)
  })
})

// A consumer's new leader on a cluster can ignore re-sent acknowledgements until its ack wait: the
// partition sits at maxAckPending, nothing held here, for as long (seen with a node killed under load).
describe('acknowledgements the server keeps ignoring', () => {
  const STUCK: ConsumerState = { ackFloor: 128, delivered: 256, deliveredUpTo: 256, ackPending: 128, pending: 700 }

  function stuck(state: { -readonly [K in keyof ConsumerState]: ConsumerState[K] }) {
    const s = setup(state, undefined, true)
    let acks = 0
    for (let i = 0; i < 3; i++) s.o.recentAcks.push({ ack: () => acks++ } as never)
    return { ...s, acks: () => acks, clock: s.host.clock as VirtualClock }
  }

  it('are sent again at each audit, and after 2.5 s without the floor moving the partition starts over', async () => {
    const { o, host, calls, acks, clock } = stuck({ ...STUCK })
    await audit(o, host)
    expect([acks(), host.counters.reAcked, calls.startOver]).toEqual([3, 3, 0])
    await clock.advance(1_000)
    await audit(o, host)
    expect([acks(), calls.startOver]).toEqual([6, 0])
    await clock.advance(1_500)
    await audit(o, host)
    expect([acks(), calls.startOver]).toEqual([6, 1]) // started over instead of sending them a third time
    await clock.advance(2_500)
    await audit(o, host) // a new consumer: counted afresh
    expect(calls.startOver).toBe(1)
  })

  it('do not start the partition over while its floor moves', async () => {
    const state = { ...STUCK }
    const { o, host, calls, clock } = stuck(state)
    for (let i = 0; i < 5; i++) {
      await audit(o, host)
      state.ackFloor += 10 // the re-sent acknowledgements took
      await clock.advance(2_000)
    }
    expect(calls.startOver).toBe(0)
  })

  it('do not start it over while this process holds messages of it (they may be on their way)', async () => {
    const { o, host, calls, acks, clock } = stuck({ ...STUCK })
    o.held.add({ jm: { seq: 200 } } as never)
    for (let i = 0; i < 4; i++) {
      await audit(o, host)
      await clock.advance(3_000)
    }
    expect([acks(), calls.startOver]).toEqual([12, 0])
  })

  it('are not sent again when the server counts no more unacknowledged than this process holds', async () => {
    const { o, host, calls, acks } = stuck({ ...STUCK, ackPending: 1 })
    o.held.add({ jm: { seq: 256 } } as never)
    await audit(o, host)
    expect([acks(), calls.startOver]).toEqual([0, 0])
  })
})
