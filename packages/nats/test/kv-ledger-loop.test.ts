/**
 * KvIdempotencyStore behind real `@flowing/core` loops (real clocks, real server): the paths the
 * transport relies on — duplicates across processes, and a redelivery admitted through `restore()`
 * taking over the key of a frozen holder.
 */
import { createLoop, type Loop, type LoopSnapshot, SNAPSHOT_FORMAT, SNAPSHOT_VERSION } from '@flowing/core'
import { type KV, Kvm } from '@nats-io/kv'
import { afterEach, expect, it, vi } from 'vitest'
import { KvIdempotencyStore, LedgerFencedError } from '../src/index.js'
import { describeNats, useConnections, useNatsServer } from './server.js'

type Messages = { work: number }

describeNats('KvIdempotencyStore behind a loop', () => {
  const server = useNatsServer()
  const connection = useConnections(server)
  const loops: Loop<Messages>[] = []
  let buckets = 0

  afterEach(async () => {
    await Promise.all(loops.splice(0).map((l) => l.stop({ deadlineMs: 0 })))
  })

  // Two processes (a store on a connection of its own each) on a fresh bucket, and the raw bucket.
  async function two(): Promise<[KvIdempotencyStore, KvIdempotencyStore, KV]> {
    const bucket = `loop-${++buckets}`
    const open = async () => KvIdempotencyStore.open(await connection(), { bucket, ttlMs: 60_000 })
    return [await open(), await open(), await new Kvm(await connection()).open(bucket)]
  }

  function loopOn(store: KvIdempotencyStore, errors: unknown[] = []): Loop<Messages> {
    const loop = createLoop<Messages>({ logger: false, idempotency: { store } })
    loop.events.on('ledger-error', (error) => errors.push(error))
    loops.push(loop)
    return loop
  }

  // A handler that commits `checkpoint` and then waits until `release()` (a holder that hangs).
  function hanging(loop: Loop<Messages>, runs: string[], checkpoint: unknown) {
    let release = () => {}
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    loop.on('work', async (m, ctx) => {
      runs.push(`${m.payload} committed=${JSON.stringify(ctx.committed)}`)
      if (ctx.committed === undefined) ctx.commit(checkpoint)
      await gate
    })
    return () => release()
  }

  it('runs a key once across two processes: the second post is dropped as a duplicate, in flight and after', async () => {
    const [a, b, kv] = await two()
    const first = loopOn(a)
    const second = loopOn(b)
    const runs: string[] = []
    const release = hanging(first, runs, 'charged')
    second.on('work', (m) => {
      runs.push(`second ${m.payload}`)
    })
    const dropped: string[] = []
    second.events.on('dropped', (m, reason) => dropped.push(`${m.payload} ${reason}`))
    first.post('work', 1, { idempotencyKey: 'pay-1' })
    await vi.waitFor(async () => expect((await kv.get('pay-1'))?.json()).toMatchObject({ state: 'committed' }))
    second.post('work', 2, { idempotencyKey: 'pay-1' })
    await vi.waitFor(() => expect(dropped).toEqual(['2 duplicate']))
    release()
    await first.drain()
    // The loop's end-of-message write is not awaited by drain(): wait for it to land.
    await vi.waitFor(async () =>
      expect((await kv.get('pay-1'))?.json()).toEqual({ state: 'done', checkpoint: 'charged' }),
    )
    second.post('work', 3, { idempotencyKey: 'pay-1' })
    await vi.waitFor(() => expect(dropped).toEqual(['2 duplicate', '3 duplicate']))
    expect(runs).toEqual(['1 committed=undefined'])
  })

  it('lets a redelivery restored elsewhere take over a frozen holder’s key: it resumes after the commit point, and the holder is fenced', async () => {
    const [a, b, kv] = await two()
    const holder = loopOn(a)
    const runs: string[] = []
    hanging(holder, runs, 'charged') // never released: frozen
    a.expect('pay-2', 'm-1')
    holder.post('work', 1, { idempotencyKey: 'pay-2' })
    await vi.waitFor(async () => expect((await kv.get('pay-2'))?.json()).toMatchObject({ state: 'committed' }))
    // The transport redelivers message m-1 to another process, which admits it through restore().
    const snapshot = redelivery(1, 'pay-2', 'charged')
    const errors: unknown[] = []
    const taker = loopOn(b, errors)
    taker.on('work', (m, ctx) => {
      runs.push(`redelivered ${m.payload} committed=${JSON.stringify(ctx.committed)}`)
    })
    b.expect('pay-2', 'm-1')
    expect(taker.restore(snapshot)).toBe(1)
    await taker.drain()
    expect(runs).toEqual(['1 committed=undefined', 'redelivered 1 committed="charged"'])
    await vi.waitFor(async () =>
      expect((await kv.get('pay-2'))?.json()).toEqual({ state: 'done', checkpoint: 'charged', owner: 'm-1' }),
    )
    expect(errors).toEqual([])
    await expect(a.set('pay-2', { state: 'done' }, 1)).rejects.toBeInstanceOf(LedgerFencedError) // the holder wakes up
  })

  it('skips a restored message whose key another owner holds in flight (the claim answers done)', async () => {
    const [a, b, kv] = await two()
    const holder = loopOn(a)
    const runs: string[] = []
    const release = hanging(holder, runs, 'charged')
    a.expect('pay-3', 'm-1')
    holder.post('work', 1, { idempotencyKey: 'pay-3' })
    await vi.waitFor(async () => expect((await kv.get('pay-3'))?.json()).toMatchObject({ state: 'committed' }))
    const other = loopOn(b)
    other.on('work', (m) => {
      runs.push(`other ${m.payload}`)
    })
    const dropped: string[] = []
    other.events.on('dropped', (m, reason) => dropped.push(`${m.payload} ${reason}`))
    b.expect('pay-3', 'm-2') // another message with the same key: a true duplicate
    other.restore(redelivery(2, 'pay-3', undefined))
    await other.drain()
    expect(dropped).toEqual(['2 duplicate'])
    release()
    await holder.drain()
    expect(runs).toEqual(['1 committed=undefined'])
    await vi.waitFor(async () =>
      expect((await kv.get('pay-3'))?.json()).toEqual({ state: 'done', checkpoint: 'charged', owner: 'm-1' }),
    )
  })
})

// The snapshot a transport would hand restore() for a redelivered message.
function redelivery(payload: number, idempotencyKey: string, checkpoint: unknown): LoopSnapshot {
  return {
    format: SNAPSHOT_FORMAT,
    version: SNAPSHOT_VERSION,
    takenAt: Date.now(),
    drained: false,
    messages: [
      {
        id: `m-${payload}`,
        type: 'work',
        payload,
        traceId: `t-${payload}`,
        hops: 0,
        priority: 0,
        state: 'queued',
        attempts: [],
        idempotencyKey,
        ...(checkpoint === undefined ? {} : { checkpoint }),
      },
    ],
  }
}
