/**
 * Per-key order across the hop, with retries, on real threads; a stop with a deadline that hands back
 * a message running on a thread, and a process that then exits.
 */
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { createLoop } from '@flowing/core'
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import { ThreadPool, threaded } from '../src/index.js'

interface Jobs {
  ordered: { n: number; ms: number; fail: boolean }
  spin: null
}

const pool = new ThreadPool({ maxThreads: 2, execArgv: [] })
const WORK = new URL('./fixtures/work.mjs', import.meta.url)

afterAll(() => pool.close())

describe('across the hop', () => {
  it('keeps each key’s order and one message of a key at a time, whatever fails and however long each runs', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({ key: fc.integer({ min: 0, max: 2 }), ms: fc.integer({ min: 0, max: 3 }), fail: fc.boolean() }),
          {
            minLength: 1,
            maxLength: 12,
          },
        ),
        async (posts) => {
          const loop = createLoop<Jobs>({ logger: false, workers: 4, retry: { maxAttempts: 2, baseMs: 1, jitter: 0 } })
          loop.on('ordered', threaded<Jobs, 'ordered'>(WORK, { pool, export: 'ordered' }))
          const running = new Map<string, number>()
          const startedByKey = new Map<string, number[]>()
          let overlap = false
          loop.events.on('started', (m) => {
            const key = String(m.key)
            if ((running.get(key) ?? 0) > 0) overlap = true
            running.set(key, (running.get(key) ?? 0) + 1)
            const n = (m.payload as Jobs['ordered']).n
            const seen = startedByKey.get(key) ?? []
            if (seen.at(-1) !== n) seen.push(n) // a retry starts the same message again
            startedByKey.set(key, seen)
          })
          const ended = (m: { key?: unknown }) => running.set(String(m.key), (running.get(String(m.key)) ?? 1) - 1)
          loop.events.on('finished', ended)
          loop.events.on('retrying', ended)
          posts.forEach((p, n) => {
            loop.post('ordered', { n, ms: p.ms, fail: p.fail }, { key: `k${p.key}` })
          })
          await loop.drain()
          await loop.stop()
          expect(overlap).toBe(false)
          for (const [key, ns] of startedByKey) {
            const posted = posts.flatMap((p, n) => (`k${p.key}` === key ? [n] : []))
            expect(ns).toEqual(posted)
          }
        },
      ),
      { numRuns: 12 },
    )
  })
})

describe('a stop with a deadline', () => {
  it('hands back the message running on a thread, and ends the thread', async () => {
    const single = new ThreadPool({ maxThreads: 1, execArgv: [] })
    const loop = createLoop<Jobs>({ logger: false })
    loop.on('spin', threaded(WORK, { pool: single, export: 'spin' }))
    loop.post('spin', null)
    await new Promise((resolve) => setTimeout(resolve, 200))
    const snapshot = await loop.stop({ deadlineMs: 100 })
    expect(snapshot.messages.map((m) => [m.type, m.state])).toEqual([['spin', 'running']])
    // The one thread is free again: the pool runs something else at once.
    const other = createLoop<{ double: number }>({ logger: false })
    other.on('double', threaded(new URL('./fixtures/double.cjs', import.meta.url), { pool: single }))
    expect(await other.request('double', 4)).toBe(8)
    await other.stop()
    await single.close()
  })

  it('lets the process exit with no pool.close(): no thread keeps it alive', async () => {
    const child = fileURLToPath(new URL('./fixtures/stop-child.mjs', import.meta.url))
    const { stdout } = await promisify(execFile)(process.execPath, [child], { timeout: 20_000 })
    expect(JSON.parse(stdout)).toEqual(['running'])
  })
})
