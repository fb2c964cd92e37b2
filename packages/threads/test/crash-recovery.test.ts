/**
 * A message running on a thread when its process is killed (`kill -9`) is recovered from the journal
 * by the next process and runs again there (at-least-once): nothing accepted is lost across the hop.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createLoop } from '@flowing/core'
import { sqliteStore } from '@flowing/sqlite'
import { afterAll, describe, expect, it } from 'vitest'
import { ThreadPool, threaded } from '../src/index.js'

const dir = mkdtempSync(join(tmpdir(), 'flowing-threads-crash-'))
const pool = new ThreadPool({ maxThreads: 1, execArgv: [] })
afterAll(async () => {
  await pool.close()
  rmSync(dir, { recursive: true, force: true })
})

// Runs the child until its message started on a thread, then kills it with SIGKILL.
async function crashWhileOnAThread(path: string): Promise<void> {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./fixtures/crash-child.mjs', import.meta.url)), path])
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('started')) resolve()
    })
    child.on('exit', (code) => reject(new Error(`the child exited (${code}) before its message started`)))
  })
  const exited = new Promise((resolve) => child.on('exit', resolve))
  child.kill('SIGKILL')
  await exited
}

describe('kill -9 while a message runs on a thread', () => {
  it('recovers the message from the journal and runs it again, once, in the next process', async () => {
    const path = join(dir, 'journal.db')
    await crashWhileOnAThread(path)
    const loop = createLoop<{ spin: { order: number } }>({ logger: false, store: sqliteStore({ path }) })
    const ran: unknown[] = []
    loop.on('spin', threaded(new URL('./fixtures/double.cjs', import.meta.url), { pool }))
    loop.events.on('succeeded', (m) => ran.push([m.key, m.payload]))
    await loop.start()
    expect(loop.metrics().counters.restored).toBe(1)
    await loop.drain()
    expect(ran).toEqual([['order-42', { order: 42 }]])
    await loop.stop()
  }, 30_000)
})
