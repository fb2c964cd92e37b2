/**
 * Rate limits at handler entry on the real clock, under GC pressure and a busy `started` listener:
 * every budget — loop, type, route, key, group — is measured at each handler's first statement with
 * `performance.now()`, the reading the loop's clock takes too. The margin is exact: a start counts
 * from a reading taken after its handler was called, so no tolerance beyond floating-point rounding
 * (1e-9 ms) is needed, however late the event loop runs. Checked 20 times in a row while another
 * process kept the second core busy (see CHANGELOG / the rate-limits guide).
 */
import { describe, expect, it } from 'vitest'
import { createLoop, type Message, type RateLimit } from '../src/index.js'
import { overWindow } from './fixtures.js'

interface Work {
  'by-type': number
  'by-route': number
  'by-key': number
  'by-group': number
}

const PER_MS = 50
const LOOP: RateLimit = { max: 12, perMs: PER_MS }
const TYPE: RateLimit = { max: 5, perMs: PER_MS }
const ROUTE: RateLimit = { max: 4, perMs: PER_MS, per: 'route' }
const KEY: RateLimit = { max: 2, perMs: PER_MS, per: 'key' }
const GROUP: RateLimit = { max: 3, perMs: PER_MS }
const EACH = 100 // messages per type: 400 in all, about two seconds at the loop's 12 per 50 ms

const busyWait = (ms: number) => {
  const end = performance.now() + ms
  while (performance.now() < end) {}
}

describe('Loop', () => {
  describe('rate limits at handler entry (real clock)', () => {
    it('never lets max + 1 handler entries into any window, under GC pressure and a busy started listener', {
      timeout: 30_000,
    }, async () => {
      const loop = createLoop<Work>({
        logger: false,
        workers: 8,
        rateLimit: LOOP,
        groups: { concurrency: 8, rateLimit: GROUP },
      })
      const entries = new Map<string, number[]>()
      const enter = (budget: string, at: number) => {
        const list = entries.get(budget) ?? []
        list.push(at)
        entries.set(budget, list)
      }
      let garbage: unknown[] = []
      const handle = (m: Message<Work>) => {
        const at = performance.now() // the handler's first statement
        enter('loop', at)
        if (m.type === 'by-type') enter('type', at)
        if (m.type === 'by-route') enter(`route:${m.payload % 2}`, at)
        if (m.type === 'by-key') enter(`key:${String(m.key)}`, at)
        if (m.type === 'by-group') enter('group', at)
        garbage = Array.from({ length: 2000 }, (_, i) => ({ i, s: `x${i}` })) // GC pressure
        return new Promise<void>((resolve) => setTimeout(resolve, Math.random() * 4))
      }
      loop.events.on('started', () => busyWait(Math.random() * 3))
      loop.on('by-type', handle, { rateLimit: TYPE })
      const router = loop.route('by-route', (m) => (m.payload % 2 === 0 ? 'even' : 'odd'), { rateLimit: ROUTE })
      router.on('even', handle).on('odd', handle)
      loop.on('by-key', handle, { rateLimit: KEY })
      loop.on('by-group', handle)
      for (let i = 0; i < EACH; i++) {
        loop.post('by-type', i)
        loop.post('by-route', i)
        loop.post('by-key', i, { key: `k${i % 3}` })
        loop.post('by-group', i, { group: 'g' })
      }
      await loop.drain()
      await loop.stop()
      expect(garbage.length).toBe(2000)
      expect(loop.metrics().counters.succeeded).toBe(4 * EACH)
      const limits: Record<string, RateLimit> = {
        loop: LOOP,
        type: TYPE,
        'route:0': ROUTE,
        'route:1': ROUTE,
        'key:k0': KEY,
        'key:k1': KEY,
        'key:k2': KEY,
        group: GROUP,
      }
      for (const [budget, limit] of Object.entries(limits)) {
        const times = entries.get(budget) ?? []
        expect(times.length, budget).toBeGreaterThan(0)
        expect(overWindow(times, limit.max, limit.perMs, 1e-9), budget).toBeUndefined()
      }
    })
  })
})
