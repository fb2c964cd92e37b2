/**
 * I8 for real: a loop on an SQLite journal in a child process is killed with SIGKILL at random moments
 * under load, 20 times, each restart recovering the same file and posting more; a last child finishes
 * what is left. Every acknowledged post has its effect (exactly once, but for attempts a kill cut
 * short), keys start in post order across the crashes, no reminder runs early, nothing is left.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { sqliteStore } from '../src/index.js'

const CHILD = fileURLToPath(new URL('./loop-crash-child.ts', import.meta.url))
const CRASHES = 20
const dir = mkdtempSync(join(tmpdir(), 'flowing-crash-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function child(args: string[]) {
  return spawn(process.execPath, ['--import', 'tsx', '--conditions=@flowing/source', CHILD, ...args], {
    stdio: ['ignore', 'ignore', 'inherit'],
  })
}

// Resolves once the log passes `test`.
async function waitFor(log: string, test: (text: string) => boolean, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs
  for (;;) {
    let text = ''
    try {
      text = readFileSync(log, 'utf8')
    } catch {}
    if (test(text)) return
    if (Date.now() > until) throw new Error(`timed out waiting on ${log}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

const count = (text: string, re: RegExp) => (text.match(re) ?? []).length

describe('kill -9 under load, on an SQLite journal', () => {
  it(`loses no acknowledged post across ${CRASHES} crashes`, { timeout: 240_000 }, async () => {
    const path = join(dir, 'journal.db')
    const log = join(dir, 'log.txt')
    for (let crash = 0; crash < CRASHES; crash++) {
      const acksBefore = count(safeRead(log), /^ack /gm)
      const p = child([path, log, 'load', String(crash * 100_000)])
      await waitFor(log, (t) => count(t, /^ack /gm) >= acksBefore + 1 + (crash % 4))
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 60)))
      p.kill('SIGKILL')
      await new Promise((r) => p.once('exit', r))
    }
    const last = child([path, log, 'finish'])
    await waitFor(log, (t) => t.includes('finished'), 60_000)
    await new Promise((r) => last.once('exit', r))

    const text = readFileSync(log, 'utf8')
    const lines = text.split('\n')
    const acked = new Set<string>()
    for (const line of lines) {
      const m = /^ack (\d+) (\d+)$/.exec(line)
      if (m === null) continue
      for (let i = Number(m[1]); i < Number(m[2]); i++) acked.add(i % 10 === 9 ? `remind-${i}` : `pay-${i}`)
    }
    const effects = new Map<string, number>()
    for (const line of lines) {
      const m = /^effect (\S+)$/.exec(line)
      if (m !== null) effects.set(m[1] as string, (effects.get(m[1] as string) ?? 0) + 1)
    }
    // Dead-lettered by the crash-loop guard (running at `maxCrashes` = 3 of the kills): an outcome, in
    // the dead-letter store, not a loss — and the only letters this workload may have.
    const lettered = new Map<string, string>()
    for (const line of lines) {
      const m = /^lettered (\S+) (\S+)$/.exec(line)
      if (m !== null) lettered.set(m[1] as string, m[2] as string)
    }
    expect([...new Set(lettered.values())].filter((name) => name !== 'CrashLoopError')).toEqual([])
    expect(lettered.size).toBeLessThanOrEqual(CRASHES)
    expect(acked.size).toBeGreaterThan(CRASHES * 50)
    const missing = [...acked].filter((id) => !effects.has(id) && !lettered.has(id))
    expect(missing).toEqual([])
    // Repeats only where a kill cut an attempt short or its outcome's commit: a few per crash at most.
    const repeats = [...effects.values()].filter((n) => n > 1).length
    console.log(
      `kill -9 ×${CRASHES}: ${acked.size} posts acknowledged, ${effects.size} effects, ${repeats} run twice (attempts cut short by a kill), ${lettered.size} lettered by the crash-loop guard, 0 lost`,
    )
    expect(repeats).toBeLessThanOrEqual(CRASHES * 8)
    expect(lines.filter((l) => l.startsWith('EARLY'))).toEqual([])
    // Per key, first starts follow post order across every crash.
    const firsts = new Map<string, number[]>()
    const seen = new Set<string>()
    for (const line of lines) {
      const m = /^start (\S+) (\d+) \d+$/.exec(line)
      if (m === null || seen.has(m[2] as string)) continue
      seen.add(m[2] as string)
      firsts.set(m[1] as string, [...(firsts.get(m[1] as string) ?? []), Number(m[2])])
    }
    for (const order of firsts.values()) expect(order).toEqual([...order].sort((a, b) => a - b))
    // Nothing is left in the journal, and finished keys are kept: a duplicate runs nothing.
    const store = sqliteStore({ path })
    const contents = store.recovered()
    expect(contents.messages).toEqual([])
    expect(contents.keys.length).toBeGreaterThanOrEqual(acked.size)
    store.close()
  })
})

function safeRead(path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return ''
  }
}
