/**
 * Schedules and keyed delays for real: a loop on an SQLite journal in a child process, with a schedule
 * firing every 100 ms (missed fires backfilled) and 20 reminders posted by job key, is killed with
 * SIGKILL six times at random moments, each restart recovering the same file. Every due time from the
 * first to the last fires, none early; a fire runs again only when a kill cut its run short; the
 * reminders cancelled by key after a restart never run, the others run.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

const CHILD = fileURLToPath(new URL('./schedule-crash-child.ts', import.meta.url))
const CRASHES = 6
const dir = mkdtempSync(join(tmpdir(), 'flowing-schedule-crash-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function child(args: string[]) {
  return spawn(process.execPath, ['--import', 'tsx', '--conditions=@flowing/source', CHILD, ...args], {
    stdio: ['ignore', 'ignore', 'inherit'],
  })
}

const read = (log: string) => {
  try {
    return readFileSync(log, 'utf8')
  } catch {
    return ''
  }
}

async function waitFor(log: string, test: (text: string) => boolean, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs
  while (!test(read(log))) {
    if (Date.now() > until) throw new Error(`timed out waiting on ${log}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

const count = (text: string, word: string) => text.split('\n').filter((l) => l === word).length

describe('schedules and keyed delays under kill -9 (a real SQLite file)', () => {
  it('fires every due time once (a cut-short run aside), never early; a reminder cancelled by key never runs', async () => {
    const path = join(dir, 'journal.db')
    const log = join(dir, 'log.txt')
    for (let crash = 0; crash < CRASHES; crash++) {
      const mode = crash === 0 ? 'post' : crash === 1 ? 'cancel' : 'run'
      const readyBefore = count(read(log), 'ready')
      const proc = child([path, log, mode])
      await waitFor(log, (text) => count(text, 'ready') > readyBefore)
      await new Promise((r) => setTimeout(r, 150 + Math.random() * 500))
      const exited = new Promise((r) => proc.once('exit', r))
      proc.kill('SIGKILL')
      await exited
      await new Promise((r) => setTimeout(r, Math.random() * 400)) // down: fires are missed meanwhile
    }
    const last = child([path, log, 'run', String(Date.now() + 3_500)])
    await waitFor(log, (text) => text.includes('stopped'), 60_000)
    await new Promise((r) => last.once('exit', r))

    const lines = read(log)
      .split('\n')
      .filter((l) => l !== '')
    expect(lines.filter((l) => l.startsWith('EARLY'))).toEqual([])
    const fires = lines.filter((l) => l.startsWith('fire ')).map((l) => Number(l.slice(5)))
    const distinct = [...new Set(fires)].sort((a, b) => a - b)
    expect(distinct.length).toBeGreaterThan(30)
    // No due time lost: from the first fire to the last, every 100 ms.
    const first = distinct[0] as number
    const want = Array.from({ length: distinct.length }, (_, k) => first + k * 100)
    expect(distinct).toEqual(want)
    // A due time runs again only when a kill cut its run short (at most one per kill).
    expect(fires.length - distinct.length).toBeLessThanOrEqual(CRASHES)
    const cancels = lines.filter((l) => l.startsWith('cancel '))
    expect(cancels).toEqual(Array.from({ length: 10 }, (_, k) => `cancel ${2 * k} cancelled`))
    const reminded = new Set(lines.filter((l) => l.startsWith('remind ')).map((l) => Number(l.slice(7))))
    expect([...reminded].sort((a, b) => a - b)).toEqual(Array.from({ length: 10 }, (_, k) => 2 * k + 1))
  }, 120_000)
})
