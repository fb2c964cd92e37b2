/**
 * The demo's crash scene: a child process runs a payment loop on an SQLite journal under load and
 * reports over IPC which posts `flushed()` acknowledged; the parent `kill -9`s it mid-load, reads what
 * the journal held, starts a second child on the same file that recovers and finishes it, and prints
 * the account from the effects both appended: nothing acknowledged lost, nothing whose completion was
 * committed run again, the repeats counted (the handlers running at the kill), per-key order kept.
 */
import { type ChildProcess, fork } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { JournalState } from '@flowing/core'
import { sqliteStore } from '@flowing/sqlite'
import {
  accountHolds,
  type ChildReport,
  type CrashAccount,
  crashAccount,
  parseEffects,
  REMINDER_DELAY_MS,
} from './crash-account.js'

/** How long the first child runs under load before the kill. */
const LOAD_MS = 500

/** The child script: the built one next to this file, or (from source, in tests) the TypeScript through tsx. */
function childScript(): { script: string; execArgv: string[]; cwd: string } {
  const cwd = fileURLToPath(new URL('../..', import.meta.url)) // the benchmarks package
  const js = fileURLToPath(new URL('./crash-child.js', import.meta.url))
  if (existsSync(js)) return { script: js, execArgv: [], cwd }
  const ts = fileURLToPath(new URL('./crash-child.ts', import.meta.url))
  return { script: ts, execArgv: ['--conditions=@flowing/source', '--import', 'tsx'], cwd }
}

function start(journal: string, effects: string, mode: 'load' | 'finish', onReport: (r: ChildReport) => void) {
  const { script, execArgv, cwd } = childScript()
  const child = fork(script, [journal, effects, mode], {
    execArgv,
    cwd,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  child.on('message', (r) => onReport(r as ChildReport))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  )
  return { child, exited }
}

function whenFirst(child: ChildProcess, type: ChildReport['type']): Promise<void> {
  return new Promise((resolve, reject) => {
    const listener = (r: ChildReport) => {
      if (r.type !== type) return
      child.off('message', listener)
      resolve()
    }
    child.on('message', listener)
    child.once('exit', () => reject(new Error(`the child exited before reporting '${type}'`)))
  })
}

/** What the journal held after the kill (read through a store, then closed): states, and committed charges. */
function journalContents(path: string): { recovered: Map<string, JournalState>; charged: Set<string> } {
  const store = sqliteStore({ path })
  try {
    const recovered = new Map<string, JournalState>()
    const charged = new Set<string>()
    for (const r of store.recovered().messages) {
      const key = r.idempotencyKey ?? r.id
      recovered.set(key, r.state)
      if (r.checkpoint !== undefined) charged.add(key)
    }
    return { recovered, charged }
  } finally {
    store.close()
  }
}

/** The first process: load, then `kill -9` after {@link LOAD_MS}. */
async function loadAndKill(journal: string, effects: string) {
  let posted = 0
  let acked = 0
  const first = start(journal, effects, 'load', (r) => {
    if (r.type === 'posted') posted = Math.max(posted, r.to)
    if (r.type === 'acked') acked = Math.max(acked, r.to)
  })
  await whenFirst(first.child, 'acked')
  await new Promise((resolve) => setTimeout(resolve, LOAD_MS))
  first.child.kill('SIGKILL')
  const exit = await first.exited
  if (exit.signal !== 'SIGKILL') throw new Error(`the first child exited on its own (${exit.code})`)
  return { posted, acked, pid: first.child.pid }
}

function describe(a: CrashAccount, finishMs: number): string[] {
  const n = (x: number) => x.toLocaleString('en-US')
  const ok = (b: boolean) => (b ? '✔' : '✘')
  const r = a.recovered
  return [
    `kill -9 after ${LOAD_MS} ms under load: ${n(a.posted)} posted (payments, delayed reminders), ${n(a.acked)} acknowledged by flushed(), ${n(a.completedBefore)} completed`,
    `the journal after the kill: ${n(r.queued + r.delayed + r.backingOff)} messages to recover — ${n(r.queued)} queued, ${n(r.delayed)} delayed, ${n(r.backingOff)} backing off`,
    `a second process on the same file recovered them and finished in ${finishMs.toFixed(0)} ms (its start-up included): ${n(a.completed)} completed in all`,
    `acknowledged ${n(a.acked)}: ${n(a.acked - a.lostAcknowledged)} took effect, ${n(a.lostAcknowledged)} lost ${ok(a.lostAcknowledged === 0)}`,
    `posted but not acknowledged at the kill: ${n(a.posted - a.acked)} — ${n(a.unacknowledgedRan)} committed anyway and ran, ${n(a.unacknowledgedLost)} lost with the process (never acknowledged, as promised)`,
    `running at the kill with their charge committed (ctx.commit): ${n(a.resumedAfterCharge)} — resumed at the receipt, not charged again`,
    `effects per idempotency key: ${n(a.once)} exactly once, ${n(a.twice)} twice ${ok(a.twice === a.twiceUncommitted && a.more === 0)} (a charge repeats only if the kill falls between it and the commit that records it, within one event-loop turn)`,
    `completed and committed before the kill, run again: ${n(a.committedRanAgain)} ${ok(a.committedRanAgain === 0)}; per-key order kept in both processes ${ok(a.outOfOrder === 0)}; reminders early: ${n(a.early)} ${ok(a.early === 0)} (each waited ${REMINDER_DELAY_MS} ms on the wall clock, across the crash)`,
    `nothing acknowledged was lost, nothing committed ran again ${ok(accountHolds(a))}`,
  ]
}

/** Runs the scene, prints the account and returns it. */
export async function runCrashDemo(log: (line: string) => void): Promise<CrashAccount> {
  const dir = mkdtempSync(join(tmpdir(), 'flowing-crash-'))
  const journal = join(dir, 'journal.db')
  const effects = join(dir, 'effects.log')
  try {
    const { posted, acked, pid } = await loadAndKill(journal, effects)
    const { recovered, charged } = journalContents(journal)
    const t0 = performance.now()
    const second = start(journal, effects, 'finish', () => {})
    const exit = await second.exited
    if (exit.code !== 0) throw new Error(`the second child failed (${exit.code ?? exit.signal})`)
    const finishMs = performance.now() - t0
    const all = parseEffects(existsSync(effects) ? readFileSync(effects, 'utf8') : '')
    const before = all.filter((e) => e.pid === pid)
    const after = all.filter((e) => e.pid !== pid)
    const account = crashAccount({ posted, acked, recovered, charged, before, after })
    for (const line of describe(account, finishMs)) log(line)
    return account
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
