/**
 * The crash-loop guard for real: a journaled message whose handler SIGKILLs its own process, run under
 * a supervisor that restarts the process each time it dies (as systemd or Kubernetes would). The
 * message is dead-lettered with a `CrashLoopError` after `maxCrashes` crashes and never runs again;
 * the messages behind it on its key run, in order, and so does everything else.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

const CHILD = fileURLToPath(new URL('./poison-child.ts', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'flowing-poison-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

// Runs the child to its end: its exit code, or the signal that ended it.
function run(args: string[]): Promise<number | NodeJS.Signals> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=@flowing/source', CHILD, ...args], {
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  return new Promise((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code ?? -1)))
}

describe('a poison message under a supervisor (SQLite journal, real SIGKILLs)', () => {
  it('is dead-lettered after maxCrashes crashes, never runs again, and its key runs on', {
    timeout: 120_000,
  }, async () => {
    const path = join(dir, 'journal.db')
    const log = join(dir, 'log.txt')
    expect(await run([path, log, 'seed', '3'])).toBe(0)
    const exits: (number | NodeJS.Signals)[] = []
    for (let restart = 0; restart < 8; restart++) {
      const exit = await run([path, log, 'run', '3'])
      exits.push(exit)
      if (exit !== 'SIGKILL') break
    }
    expect(exits).toEqual(['SIGKILL', 'SIGKILL', 'SIGKILL', 0])
    const lines = readFileSync(log, 'utf8').trim().split('\n')
    const events = lines.map((l) => l.split(' ').slice(0, 2).join(' '))
    expect(events.filter((e) => e === 'start poison')).toHaveLength(3)
    expect(lines.filter((l) => l.startsWith('dead '))).toEqual(['dead poison CrashLoopError'])
    const at = (e: string) => events.indexOf(e)
    expect(at('dead poison')).toBeGreaterThan(events.lastIndexOf('start poison'))
    // Key `a` in order around the poison; `b` ran (in the first life, before or while it died); all once.
    expect(at('effect a1')).toBeLessThan(at('start poison'))
    expect(at('effect a2')).toBeGreaterThan(at('dead poison'))
    expect(at('effect a3')).toBeGreaterThan(at('effect a2'))
    for (const n of ['a1', 'a2', 'a3', 'b1', 'b2'])
      expect(
        events.filter((e) => e === `effect ${n}`),
        n,
      ).toHaveLength(1)
    expect(events.filter((e) => e === 'finished')).toHaveLength(0) // (the line carries the pid)
    expect(lines.at(-1)).toMatch(/^finished \d+$/)
  })
})
