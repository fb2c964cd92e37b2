import { type ChildProcess, spawn } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { createLoop, type LoopSnapshot } from '../../src/index.js'
import type { JobMessages } from './sigterm-child.js'

const childPath = fileURLToPath(new URL('./sigterm-child.ts', import.meta.url))
const KEYS = 20 // as in the child: job n has key `k${n % KEYS}`

/** Resolves once the child printed `ready`; rejects if it exits first or takes longer than `ms`. */
function ready(child: ChildProcess, stderr: () => string, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => fail(new Error(`child not ready within ${ms} ms\n${stderr()}`)), ms)
    const onData = (chunk: Buffer) => {
      out += chunk.toString()
      if (out.includes('ready\n')) done()
    }
    const onExit = (code: number | null, signal: string | null) =>
      fail(new Error(`child exited (${code ?? signal}) before ready\n${stderr()}`))
    function cleanup() {
      clearTimeout(timer)
      child.stdout?.off('data', onData)
      child.off('exit', onExit)
    }
    function done() {
      cleanup()
      resolve()
    }
    function fail(error: Error) {
      cleanup()
      reject(error)
    }
    child.stdout?.on('data', onData)
    child.once('exit', onExit)
  })
}

/** Resolves with the child's exit code and signal; rejects after `ms`. */
function exited(child: ChildProcess, ms: number): Promise<{ code: number | null; signal: string | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode })
  }
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`child did not exit within ${ms} ms`)), ms)
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal })
    })
  })
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const jobNumber = (id: string) => Number(id.slice('job-'.length))
const keyOf = (id: string) => `k${jobNumber(id) % KEYS}`

describe('a real process stopped by SIGTERM', () => {
  let tmpDir: string | undefined
  let child: ChildProcess | undefined

  afterEach(() => {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    child = undefined
    if (tmpDir !== undefined) fs.rmSync(tmpDir, { recursive: true, force: true })
    tmpDir = undefined
  })

  it('writes a snapshot that a fresh loop restores: nothing is lost, nothing is done twice', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flowing-sigterm-'))
    tmpDir = dir
    // `@flowing/source` resolves the workspace packages to their sources, as vitest does.
    const proc = spawn(process.execPath, ['--conditions=@flowing/source', '--import', 'tsx', childPath, dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    child = proc
    let stderr = ''
    proc.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })

    await ready(proc, () => stderr, 20_000)
    await sleep(150) // load: the child posts faster than it can work, so a backlog builds up
    expect(proc.kill('SIGTERM')).toBe(true)
    const exit = await exited(proc, 10_000)
    expect({ ...exit, stderr }).toEqual({ code: 0, signal: null, stderr: '' })

    // What the loop accepted before SIGTERM (written in onSnapshot: nothing could be posted after).
    const { posted, total } = JSON.parse(fs.readFileSync(path.join(dir, 'posted.json'), 'utf8')) as {
      posted: string[]
      total: number
    }
    expect(posted.length).toBeGreaterThan(0)
    expect(posted.length).toBeLessThanOrEqual(total)
    expect(posted).toEqual(Array.from({ length: posted.length }, (_, i) => `job-${i + 1}`))

    const snapshot = JSON.parse(fs.readFileSync(path.join(dir, 'snapshot.json'), 'utf8')) as LoopSnapshot
    const effectsFile = path.join(dir, 'effects.log')
    const childEffects = fs.existsSync(effectsFile)
      ? fs.readFileSync(effectsFile, 'utf8').split('\n').filter(Boolean)
      : []

    // A real, non-empty snapshot, cut off at the deadline with handlers still running.
    expect(snapshot).toMatchObject({ format: 'flowing.snapshot', version: 1, drained: false })
    expect(snapshot.messages.length).toBeGreaterThan(0)
    const states = new Set(snapshot.messages.map((m) => m.state))
    expect([...states].every((s) => s === 'queued' || s === 'running')).toBe(true)
    expect(states.has('running')).toBe(true) // aborted at the deadline: their effects must not have happened

    // The child did each of its jobs at most once, and only accepted ones.
    const accepted = new Set(posted)
    expect(new Set(childEffects).size).toBe(childEffects.length)
    expect(childEffects.filter((id) => !accepted.has(id))).toEqual([])

    // The snapshot holds exactly the accepted jobs the child did not do, in post order, intact.
    const done = new Set(childEffects)
    expect(snapshot.messages.map((m) => m.idempotencyKey)).toEqual(posted.filter((id) => !done.has(id)))
    for (const m of snapshot.messages) {
      const id = m.idempotencyKey ?? ''
      expect(m).toMatchObject({ type: 'job', payload: { n: jobNumber(id) }, key: keyOf(id), hops: 0 })
    }

    // Restore in a fresh loop (this process), run everything, stop.
    const loop = createLoop<JobMessages>({ workers: 8, idempotency: {}, logger: false })
    const restoredEffects: string[] = []
    let aborted = 0
    loop.on('job', async (m, ctx) => {
      await new Promise((resolve) => setTimeout(resolve, m.payload.n % 3)) // the child's handler, faster
      if (ctx.signal.aborted) {
        aborted++
        return
      }
      restoredEffects.push(`job-${m.payload.n}`)
    })
    expect(loop.restore(snapshot)).toBe(snapshot.messages.length)
    // The restored keys are owned again: a second copy of a pending job is refused.
    const pending = snapshot.messages[0]
    expect(
      loop.tryPost('job', pending?.payload as { n: number }, { idempotencyKey: pending?.idempotencyKey }).status,
    ).toBe('duplicate')
    await loop.drain()
    const final = await loop.stop()
    expect(final).toMatchObject({ drained: true, messages: [] })
    expect(aborted).toBe(0)
    expect(loop.metrics().counters).toMatchObject({
      restored: snapshot.messages.length,
      succeeded: snapshot.messages.length,
    })

    // Nothing lost, nothing done twice: every accepted job was done exactly once, across both processes.
    const all = [...childEffects, ...restoredEffects]
    expect(all.length).toBe(posted.length)
    expect([...all].sort()).toEqual([...posted].sort())

    // Per-key order held across the restart: each key's jobs were done in post order.
    for (let k = 0; k < KEYS; k++) {
      const key = `k${k}`
      expect(all.filter((id) => keyOf(id) === key)).toEqual(posted.filter((id) => keyOf(id) === key))
    }
  }, 30_000)
})
