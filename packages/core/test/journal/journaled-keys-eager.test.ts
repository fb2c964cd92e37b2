import { describe, expect, it } from 'vitest'
import { createLoop, MemoryStore, VirtualClock } from '../../src/index.js'

interface Messages {
  job: number
}

describe('finished idempotency keys with a store and the idempotency option', () => {
  it('reach the journal, so a restarted loop refuses a finished key as a duplicate', async () => {
    const store = new MemoryStore()
    const loop = createLoop<Messages>({
      store,
      idempotency: { maxKeys: 1_000 },
      clock: new VirtualClock(0, Date.now()),
    })
    loop.on('job', () => {})
    await loop.start()
    loop.post('job', 1, { idempotencyKey: 'k' })
    await loop.drain()
    await loop.stop()
    const again = createLoop<Messages>({
      store: store.reopen(),
      idempotency: { maxKeys: 1_000 },
      clock: new VirtualClock(0, Date.now()),
    })
    const ran: number[] = []
    again.on('job', (m) => {
      ran.push(m.payload)
    })
    await again.start()
    expect(again.tryPost('job', 2, { idempotencyKey: 'k' }).status).toBe('duplicate')
    await again.drain()
    expect(ran).toEqual([])
    await again.stop()
  })
})
