/**
 * The distributed loop in one process against a private server: posts run in per-key order, follow-ups
 * travel through the streams, retries keep the key blocked, delays are never early, dead letters land
 * in the shared stream and replay, duplicates are refused, a full stream refuses posts with the same
 * typed error an in-process loop uses.
 */
import { BackpressureError, InvalidArgumentError, QueueFullError, RetryableError, VirtualClock } from '@flowing/core'
import { jetstreamManager } from '@nats-io/jetstream'
import { connect } from '@nats-io/transport-node'
import { afterEach, expect, it } from 'vitest'
import { createNatsLoop, type NatsLoop, type NatsLoopOptions, TopologyError } from '../src/index.js'
import { describeNats, useNatsServer } from './server.js'
import { drive, driveUntil } from './virtual-time.js'

interface Messages {
  step: { key: string; n: number }
  fail: { n: number }
  parent: { n: number }
  child: { n: number }
}

describeNats('NatsLoop (one process, a private nats-server)', () => {
  const server = useNatsServer()
  const open: NatsLoop<Messages>[] = []
  let names = 0
  const make = async (o: Partial<NatsLoopOptions> = {}): Promise<NatsLoop<Messages>> => {
    const loop = await createNatsLoop<Messages>({
      servers: server().url,
      name: `t${names++}`,
      partitions: 4,
      ...o,
    })
    open.push(loop)
    return loop
  }
  afterEach(async () => {
    await Promise.all(open.splice(0).map((l) => l.stop()))
  })

  it('runs every message once, in post order per key', async () => {
    const loop = await make()
    const seen = new Map<string, number[]>()
    loop.on('step', async ({ payload }) => {
      const list = seen.get(payload.key) ?? []
      list.push(payload.n)
      seen.set(payload.key, list)
      await new Promise((r) => setTimeout(r, Math.random() * 2))
    })
    await loop.start()
    for (let n = 0; n < 200; n++) await loop.post('step', { key: `k${n % 7}`, n }, { key: `k${n % 7}` })
    await loop.drain()
    let total = 0
    for (const [, list] of seen) {
      expect(list).toEqual([...list].sort((a, b) => a - b))
      total += list.length
    }
    expect(total).toBe(200)
    expect(loop.metrics()).toMatchObject({ received: 200, acked: 200, fenced: 0, held: 0 })
  })

  it('publishes follow-ups into the streams with the trace and one more hop', async () => {
    const loop = await make()
    const children: { traceId: string; hops: number }[] = []
    let parentTrace = ''
    loop.on('parent', (m, ctx) => {
      parentTrace = m.traceId
      ctx.post('child', { n: m.payload.n }, { key: 'c' })
    })
    loop.on('child', (m) => void children.push({ traceId: m.traceId, hops: m.hops }))
    await loop.start()
    const posted = await loop.post('parent', { n: 1 })
    await loop.drain()
    expect(parentTrace).toBe(posted.id)
    expect(children).toEqual([{ traceId: posted.id, hops: 1 }])
  })

  it('carries headers as NATS headers; a follow-up inherits them and overrides by name', async () => {
    const loop = await make()
    const seen: unknown[] = []
    loop.on('parent', (m, ctx) => {
      seen.push(['parent', { ...m.headers }])
      ctx.post('child', { n: 2 }, { headers: { step: 'child' } })
    })
    loop.on('child', (m) => void seen.push(['child', { ...m.headers }]))
    await loop.start()
    await loop.post('parent', { n: 1 }, { headers: { 'x-correlation-id': 'c-1', step: 'parent' } })
    await loop.drain()
    expect(seen).toEqual([
      ['parent', { 'x-correlation-id': 'c-1', step: 'parent' }],
      ['child', { 'x-correlation-id': 'c-1', step: 'child' }],
    ])
    await expect(loop.post('parent', { n: 3 }, { headers: { 'bad name': 'x' } })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    )
  })

  it('stamps headers at every post and follow-up, in order; a throwing stamper refuses the post', async () => {
    const loop = await make()
    const seen: unknown[] = []
    loop.on('parent', (m, ctx) => {
      seen.push(['parent', { ...m.headers }])
      ctx.post('child', { n: 2 })
    })
    loop.on('child', (m) => void seen.push(['child', { ...m.headers }]))
    loop.stamp((type) => ({ 'x-stamped': type }))
    loop.stamp((_type, headers) => ({ 'x-seen': headers['x-stamped'] ?? 'none' }))
    await loop.start()
    await loop.post('parent', { n: 1 }, { headers: { 'x-correlation-id': 'c-1' } })
    await loop.drain()
    expect(seen).toEqual([
      ['parent', { 'x-correlation-id': 'c-1', 'x-stamped': 'parent', 'x-seen': 'parent' }],
      ['child', { 'x-correlation-id': 'c-1', 'x-stamped': 'child', 'x-seen': 'child' }],
    ])
    const boom = new Error('no context')
    loop.stamp(() => {
      throw boom
    })
    const refused = await loop.post('parent', { n: 3 }).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(InvalidArgumentError)
    expect((refused as InvalidArgumentError).cause).toBe(boom)
    expect(() => loop.stamp('x' as never)).toThrow(InvalidArgumentError)
  })

  it("throws bad input from a handler's ctx.tryPost, as core's does, instead of calling it a refusal", async () => {
    const loop = await make()
    const seen: unknown[] = []
    loop.on('parent', (_m, ctx) => {
      try {
        seen.push(ctx.tryPost('child', { n: 1 }))
      } catch (error) {
        seen.push(error)
      }
    })
    loop.stamp((type) => {
      if (type === 'child') throw new Error('no context')
      return {}
    })
    await loop.start()
    await loop.post('parent', { n: 0 })
    await loop.drain()
    expect(seen).toHaveLength(1)
    expect(seen[0]).toBeInstanceOf(InvalidArgumentError)
  })

  it('retries back off while later messages of the key wait', async () => {
    const loop = await make({ loop: { retry: { maxAttempts: 3, baseMs: 30, jitter: 0 }, logger: false } })
    const order: string[] = []
    let failures = 0
    loop.on('step', (m) => {
      if (m.payload.n === 0 && failures++ < 2) throw new RetryableError('flaky')
      order.push(`${m.payload.n}`)
    })
    await loop.start()
    await loop.post('step', { key: 'a', n: 0 }, { key: 'a' })
    await loop.post('step', { key: 'a', n: 1 }, { key: 'a' })
    await loop.drain()
    expect(order).toEqual(['0', '1'])
  })

  it('never starts a delayed message early', async () => {
    const loop = await make()
    const started: number[] = []
    loop.on('step', () => void started.push(Date.now()))
    await loop.start()
    const at = Date.now()
    await loop.postDelayed('step', { key: 'd', n: 0 }, 300, { key: 'd' })
    await loop.drain()
    expect(started).toHaveLength(1)
    expect((started[0] ?? 0) - at).toBeGreaterThanOrEqual(300)
  })

  it('dead-letters into the shared stream, and replays', async () => {
    const loop = await make({ loop: { retry: { maxAttempts: 2, baseMs: 5 }, logger: false } })
    let fail = true
    let ran = 0
    loop.on('fail', () => {
      ran++
      if (fail) throw new Error('broken downstream')
    })
    await loop.start()
    const posted = await loop.post('fail', { n: 1 }, { key: 'x' })
    await loop.drain()
    const letters = await loop.deadLetters.list()
    expect(letters.map((l) => [l.id, l.type, l.error.message])).toEqual([[posted.id, 'fail', 'broken downstream']])
    fail = false
    const report = await loop.deadLetters.replay()
    expect(report.replayed.size).toBe(1)
    await loop.drain()
    expect(ran).toBe(3)
    expect(await loop.deadLetters.count()).toBe(0)
  })

  it('refuses a duplicate idempotency key, and a post to a full partition with QueueFullError', async () => {
    // Each of the 4 partitions holds a quarter of maxMessages: key a's, 3.
    const loop = await make({ maxMessages: 12 })
    const a = { key: 'a' }
    await loop.post('step', { key: 'a', n: 0 }, { ...a, idempotencyKey: 'once' })
    const dup = await loop.tryPost('step', { key: 'a', n: 1 }, { ...a, idempotencyKey: 'once' })
    expect(dup).toMatchObject({ ok: false, status: 'duplicate' })
    await loop.post('step', { key: 'a', n: 2 }, a)
    await loop.post('step', { key: 'a', n: 3 }, a)
    const full = loop.post('step', { key: 'a', n: 4 }, a)
    await expect(full).rejects.toBeInstanceOf(QueueFullError)
    await expect(full).rejects.toMatchObject({ load: { queued: 3, capacity: 3 } })
    expect(await loop.tryPost('step', { key: 'a', n: 5 }, a)).toMatchObject({ ok: false, status: 'full' })
    expect(await loop.fill()).toMatchObject({ messages: 3, maxMessages: 12, fill: 0.25 })
    // Keyless posts with one idempotency key go to one partition, whose duplicate window refuses the second.
    await loop.post('step', { key: '', n: 6 }, { idempotencyKey: 'keyless' })
    const again = await loop.tryPost('step', { key: '', n: 7 }, { idempotencyKey: 'keyless' })
    expect(again).toMatchObject({ ok: false, status: 'duplicate' })
  })

  // On a virtual clock: the fill is read every `intervalMs` of the clock, so the test drives the
  // readings instead of sleeping through them.
  it('applies the watermarks to the stream fill: one event per crossing, typed refusals', async () => {
    const clock = new VirtualClock()
    const loop = await make({ maxMessages: 20, partitions: 1, backpressure: { intervalMs: 20 }, clock })
    const levels: string[] = []
    loop.events.on('backpressure', (t) => levels.push(`${t.from}>${t.to}`))
    for (let n = 0; n < 16; n++) await loop.post('step', { key: 'a', n }) // 80 %: shed
    await driveUntil(clock, () => levels.length >= 2)
    expect(levels).toEqual(['normal>warn', 'warn>shed'])
    const shed = await loop.tryPost('step', { key: 'a', n: 99 }, { priority: 7 })
    expect(shed).toMatchObject({ ok: false, status: 'shed' })
    expect(shed.ok === false && shed.error).toBeInstanceOf(BackpressureError)
    expect(await loop.tryPost('step', { key: 'a', n: 100 }, { priority: 0 })).toMatchObject({ ok: true })
    loop.on('step', () => {})
    await loop.start()
    await drive(clock, loop.drain())
    await driveUntil(clock, () => levels.at(-1)?.endsWith('>normal') === true)
    expect(levels.at(-1)).toMatch(/>normal$/)
    await drive(clock, loop.stop())
  })

  it('refuses the single work stream an earlier version made, naming it, and makes nothing', async () => {
    const nc = await connect({ servers: server().url })
    const jsm = await jetstreamManager(nc)
    await jsm.streams.add({ name: 'legacy-work', subjects: ['legacy.work.*'] })
    const made = createNatsLoop({ servers: server().url, name: 'legacy', partitions: 4 })
    await expect(made).rejects.toBeInstanceOf(TopologyError)
    await expect(made).rejects.toMatchObject({ code: 'ERR_FLOWING_NATS_TOPOLOGY', stream: 'legacy-work' })
    await expect(made).rejects.toThrow(/single work stream of an earlier version .* drain it, then delete it/)
    const names: string[] = []
    for await (const name of jsm.streams.names()) names.push(name)
    expect(names.filter((n) => n.startsWith('legacy-'))).toEqual(['legacy-work'])
    await nc.close()
  })

  it('refuses to share streams made for another partition count or session length; ackWaitMs is each owner’s', async () => {
    await make({ name: 'shared', partitions: 4, ackWaitMs: 5000 })
    const other = createNatsLoop({ servers: server().url, name: 'shared', partitions: 8, ackWaitMs: 5000 })
    await expect(other).rejects.toBeInstanceOf(TopologyError)
    await expect(other).rejects.toThrow(/partitions=4.*partitions=8/)
    await expect(other).rejects.toMatchObject({ code: 'ERR_FLOWING_NATS_TOPOLOGY', stream: 'shared-work-0' })
    // Each owner makes its partitions' consumers with its own ack wait: processes need not agree on it.
    const slower = await createNatsLoop({ servers: server().url, name: 'shared', partitions: 4, ackWaitMs: 9000 })
    await slower.stop()
    // But on the session: a process counting on a longer one than the server keeps could act as an
    // owner after another took over.
    const longer = createNatsLoop({ servers: server().url, name: 'shared', partitions: 4, sessionMs: 9000 })
    await expect(longer).rejects.toThrow(/sessions last 6000 ms and this process asks for 9000 ms \(sessionMs\)/)
    await expect(longer).rejects.toMatchObject({ code: 'ERR_FLOWING_NATS_TOPOLOGY', stream: 'KV_shared-members' })
  })

  it('names the rejected value of an unknown option, as every package does, not its name', async () => {
    const url = server().url
    const unknown = await createNatsLoop({ servers: url, partitons: 4 } as never).catch((e: unknown) => e)
    expect(unknown).toBeInstanceOf(InvalidArgumentError)
    expect(unknown).toMatchObject({ argument: 'options.partitons', value: 4 })
    expect((unknown as Error).message).toMatch(
      /^Expected `options\.partitons` to be one of the known options \(.*\), got `4` \(number\); did you mean `partitions`\?$/,
    )
    const ttl = await createNatsLoop({ servers: url, idempotency: { ttl: 5_000 } as never }).catch((e: unknown) => e)
    expect(ttl).toMatchObject({ argument: 'options.idempotency.ttl', value: 5_000 })
    expect((ttl as Error).message).toBe(
      'Expected `options.idempotency.ttl` to be one of the known options (ttlMs), got `5000` (number); did you mean `ttlMs`?',
    )
    const loop = await make()
    const post = await loop.post('step', { key: 'a', n: 0 }, { prority: 3 } as never).catch((e: unknown) => e)
    expect(post).toMatchObject({ argument: 'options.prority', value: 3 })
    expect((post as Error).message).toMatch(/, got `3` \(number\); did you mean `priority`\?$/)
  })

  it("names a ledger bucket's other max age as this loop's option, from the store error's fields", async () => {
    await make({ name: 'aged', idempotency: { ttlMs: 60_000 } })
    const error = await createNatsLoop({
      servers: server().url,
      name: 'aged',
      partitions: 4,
      idempotency: { ttlMs: 90_000 },
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(InvalidArgumentError)
    expect(error).toMatchObject({
      argument: 'options.idempotency.ttlMs',
      rule: 'the max age of the existing bucket `aged-keys` (60000 ms)',
      value: 90_000,
    })
    expect((error as Error).message).toBe(
      'Expected `options.idempotency.ttlMs` to be the max age of the existing bucket `aged-keys` (60000 ms), got `90000` (number)',
    )
    expect((error as Error).cause).toMatchObject({ argument: 'options.ttlMs' })
  })

  it('rejects bad options and arguments with typed errors, before connecting', async () => {
    await expect(createNatsLoop({ servers: server().url, partitons: 4 } as never)).rejects.toThrow(
      /options\.partitons.*did you mean `partitions`/,
    )
    await expect(createNatsLoop({ servers: server().url, name: 'a.b' })).rejects.toBeInstanceOf(InvalidArgumentError)
    await expect(createNatsLoop({ servers: server().url, loop: { capacity: 3 } as never })).rejects.toThrow(
      /options\.loop\.capacity/,
    )
    await expect(
      createNatsLoop({ servers: server().url, backpressure: { shed: { enter: 2 } } as never }),
    ).rejects.toThrow(/shed/)
    const loop = await make()
    await expect(loop.post('step', { key: 'a', n: 0 }, { priority: 12 as never })).rejects.toThrow(/options\.priority/)
    await expect(loop.postDelayed('step', { key: 'a', n: 0 }, -1)).rejects.toThrow(/delayMs/)
  })
})
