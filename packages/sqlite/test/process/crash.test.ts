import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, it } from 'vitest'
import { normalized, StoreModel } from '../../../core/test/contract/store-fixtures.js'
import { SqliteStore, type SynchronousMode } from '../../src/index.js'
import { bundleChild } from './bundle.js'
import { crashBatch, lastBatch } from './crash-batches.js'

const KILLS = 20
const bundleDir = mkdtempSync(join(tmpdir(), 'flowing-sqlite-child-'))
// The child, bundled once (see bundle.ts); filled in beforeAll.
let childPath = ''

/** A child committing batches; `reported()` is the last batch it printed as committed. */
function startChild(path: string, synchronous: SynchronousMode) {
  const child = spawn(process.execPath, [childPath, path, synchronous], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString()
  })
  child.stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString()
  })
  const started = new Promise<number>((resolve, reject) => {
    const onData = () => {
      const match = /^start (\d+)$/m.exec(out)
      if (match === null) return
      child.stdout.off('data', onData)
      resolve(Number(match[1]))
    }
    child.stdout.on('data', onData)
    child.once('exit', (code, signal) => reject(new Error(`child exited (${code ?? signal}) before start\n${err}`)))
  })
  const exited = new Promise<string | null>((resolve) => child.once('exit', (_, signal) => resolve(signal)))
  const reported = () => {
    const all = [...out.matchAll(/^committed (\d+)$/gm)]
    return all.length === 0 ? undefined : Number(all[all.length - 1]?.[1])
  }
  return { child, started, exited, reported, stderr: () => err }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('SqliteStore under kill -9', () => {
  beforeAll(async () => {
    childPath = await bundleChild(fileURLToPath(new URL('./crash-child.ts', import.meta.url)), bundleDir, 'crash-child')
  }, 30_000)
  afterAll(() => rmSync(bundleDir, { recursive: true, force: true }))
  // Children still running when the tests end (a failed assertion leaves one behind).
  const children: ChildProcess[] = []
  afterAll(() => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })

  for (const synchronous of ['normal', 'full'] satisfies SynchronousMode[]) {
    it(`synchronous ${synchronous}: after each of ${KILLS} kills the journal holds exactly batches 1…k, k ≥ the last one reported`, async ({
      expect,
      onTestFinished,
    }) => {
      const dir = mkdtempSync(join(tmpdir(), `flowing-sqlite-crash-${synchronous}-`))
      onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
      const path = join(dir, 'journal.db')
      const model = new StoreModel()
      let applied = 0
      let previous = 0
      for (let kill = 0; kill < KILLS; kill++) {
        const run = startChild(path, synchronous)
        children.push(run.child)
        expect(await run.started).toBe(previous) // the child recovered what the last check saw
        await sleep(20 + Math.random() * 200)
        run.child.kill('SIGKILL')
        expect(await run.exited).toBe('SIGKILL')
        const reported = run.reported() ?? previous

        const store = new SqliteStore({ path, synchronous })
        const got = store.recovered()
        store.close()
        const k = lastBatch(got.messages)
        // Committed means durable (k ≥ reported); at most the batch in flight is there unreported.
        expect(k).toBeGreaterThanOrEqual(reported)
        expect(k).toBeLessThanOrEqual(reported + 1)
        for (; applied < k; applied++) model.apply(crashBatch(applied + 1))
        // Compared as JSON text: exact, and fast on the ~10⁴ rows the journal reaches.
        expect(JSON.stringify(normalized(got))).toBe(JSON.stringify(model.contents()))
        previous = k
      }
      expect(previous).toBeGreaterThan(KILLS) // the children did commit, not only start
    }, 120_000)
  }
})
