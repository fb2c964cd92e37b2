/**
 * `node dist/watchdog.js [--smoke]`: the per-message cost of `@flowing/watchdog` — guard + done with
 * the signal unread and read, against `AbortSignal.timeout(5000)`, plus a timeout that fires on a
 * manual clock. Fails (exit 1) when a count does not add up — never on speed.
 */

import { writeFileSync } from 'node:fs'
import type { TimerProvider } from '@flowing/timing-wheel'
import { type Attempt, Watchdog, type WatchdogStats } from '@flowing/watchdog'
import { BenchError, expectEqual } from './lib/check.js'
import { collect, ensureExposedGc, heapUsed } from './lib/gc.js'
import { codeRevision, describeMachine, formatMachine } from './lib/machine.js'
import { runSuite } from './lib/run-suite.js'
import { formatCount, formatRatio, median } from './lib/stats.js'
import { renderTable } from './lib/table.js'

const RESULTS = new URL('../RESULTS-watchdog.md', import.meta.url)

const USAGE = 'usage: node dist/watchdog.js [--smoke]'

const TARGET_NS = 1_000
const TARGET_BYTES = 200
const LABEL = { type: 'order.paid', key: 'o-1' }
const GUARD = { timeoutMs: 5_000, label: LABEL }
const FIRE = { timeoutMs: 1, label: LABEL }

/** One round of one case: time per message and retained heap per pending item (NaN when not measured). */
interface Sample {
  readonly ns: number
  readonly bytes: number
}

type CaseId = 'unread' | 'read' | 'abort-timeout' | 'fire'

const CASES: readonly { readonly id: CaseId; readonly name: string }[] = [
  { id: 'unread', name: 'guard + done, signal never read' },
  { id: 'read', name: 'guard + done, signal read' },
  { id: 'fire', name: 'guard, timeout fires (manual clock)' },
  { id: 'abort-timeout', name: 'AbortSignal.timeout(5000)' }, // last: its timers cannot be disposed
]

/**
 * A clock that moves only when told: `setTimeout` handles and `setImmediate` continuations run
 * synchronously inside {@link ManualClock.advance}, so a fired timeout costs no real waiting.
 */
class ManualClock implements TimerProvider {
  #now = 0
  #nextHandle = 1
  readonly #timers = new Map<number, { readonly at: number; readonly fn: () => void }>()
  #immediates: (() => void)[] = []

  now(): number {
    return this.#now
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const handle = this.#nextHandle++
    this.#timers.set(handle, { at: this.#now + ms, fn })
    return handle
  }

  clearTimeout(handle: unknown): void {
    this.#timers.delete(handle as number)
  }

  setImmediate(fn: () => void): void {
    this.#immediates.push(fn)
  }

  /** Moves the clock by `ms` and runs every timer and continuation that becomes due, until none is left. */
  advance(ms: number): void {
    this.#now += ms
    for (;;) {
      if (this.#immediates.length > 0) {
        const batch = this.#immediates
        this.#immediates = []
        for (const fn of batch) fn()
        continue
      }
      let due: number | undefined
      for (const [handle, timer] of this.#timers) {
        if (timer.at <= this.#now) {
          due = handle
          break
        }
      }
      if (due === undefined) return
      const timer = this.#timers.get(due)
      this.#timers.delete(due)
      timer?.fn()
    }
  }

  /** Timers and continuations still queued. */
  get pending(): number {
    return this.#timers.size + this.#immediates.length
  }
}

function checkStats(what: string, stats: WatchdogStats, expected: Partial<WatchdogStats>): void {
  const zeroes: WatchdogStats = {
    guarded: 0,
    running: 0,
    completed: 0,
    failed: 0,
    timedOut: 0,
    cancelled: 0,
    lateCompletions: 0,
    fencedEffects: 0,
    zombies: 0,
    zombiesTotal: 0,
  }
  const want: WatchdogStats = { ...zeroes, ...expected }
  for (const key of Object.keys(want) as (keyof WatchdogStats)[]) {
    expectEqual(`${what}: stats().${key}`, stats[key], want[key])
  }
}

/** Guards `n` attempts (reading each signal if asked), measures the heap with all pending, then settles them. */
function guardAndDone(n: number, readSignal: boolean): Sample {
  const what = readSignal ? 'guard + done (signal read)' : 'guard + done (signal unread)'
  const watchdog = new Watchdog()
  const pending = new Array<Attempt | undefined>(n).fill(undefined)
  collect()
  const heapBefore = heapUsed()
  const t0 = performance.now()
  if (readSignal) {
    for (let i = 0; i < n; i++) {
      const attempt = watchdog.guard(GUARD)
      if (attempt.signal.aborted) throw new BenchError(`${what}: signal aborted while running`)
      pending[i] = attempt
    }
  } else {
    for (let i = 0; i < n; i++) pending[i] = watchdog.guard(GUARD)
  }
  const t1 = performance.now()
  collect()
  const bytes = (heapUsed() - heapBefore) / n
  expectEqual(`${what}: running with all pending`, watchdog.running, n)
  expectEqual(`${what}: timers pending`, watchdog.pendingTimers, n)
  let won = 0
  const t2 = performance.now()
  for (let i = 0; i < n; i++) if ((pending[i] as Attempt).done()) won++
  const t3 = performance.now()
  expectEqual(`${what}: done() calls that won`, won, n)
  let again = 0
  for (let i = 0; i < n; i++) if ((pending[i] as Attempt).done()) again++
  expectEqual(`${what}: second done() calls that won`, again, 0)
  checkStats(what, watchdog.stats(), { guarded: n, completed: n })
  expectEqual(`${what}: timers pending after done`, watchdog.pendingTimers, 0)
  return { ns: ((t1 - t0 + (t3 - t2)) * 1e6) / n, bytes }
}

/** Creates `n` `AbortSignal.timeout(5000)` and measures the heap with all pending. */
function abortSignalTimeout(n: number): Sample {
  const pending = new Array<AbortSignal | undefined>(n).fill(undefined)
  collect()
  const heapBefore = heapUsed()
  const t0 = performance.now()
  for (let i = 0; i < n; i++) pending[i] = AbortSignal.timeout(5_000)
  const t1 = performance.now()
  collect()
  const bytes = (heapUsed() - heapBefore) / n
  let aborted = 0
  for (let i = 0; i < n; i++) if ((pending[i] as AbortSignal).aborted) aborted++
  expectEqual('AbortSignal.timeout: signals aborted before 5 s', aborted, 0)
  pending.fill(undefined) // the unref'd timers outlive the signals; nothing keeps the process alive
  return { ns: ((t1 - t0) * 1e6) / n, bytes }
}

/** Guards `n` attempts with `timeoutMs: 1` on a manual clock and times the advance that fires them all. */
function timeoutFires(n: number): Sample {
  const what = 'timeout fires'
  const clock = new ManualClock()
  let fired = 0
  const watchdog = new Watchdog({
    timers: clock,
    graceMs: Number.POSITIVE_INFINITY,
    onTimeout: () => {
      fired++
    },
  })
  const pending = new Array<Attempt | undefined>(n).fill(undefined)
  for (let i = 0; i < n; i++) pending[i] = watchdog.guard(FIRE)
  collect()
  const t0 = performance.now()
  clock.advance(2)
  const t1 = performance.now()
  expectEqual(`${what}: onTimeout calls`, fired, n)
  let timedOut = 0
  let late = 0
  for (let i = 0; i < n; i++) {
    const attempt = pending[i] as Attempt
    if (attempt.state === 'timed-out') timedOut++
    if (!attempt.done()) late++
  }
  expectEqual(`${what}: attempts in state timed-out`, timedOut, n)
  expectEqual(`${what}: done() after the timeout that lost`, late, n)
  clock.advance(10_000)
  expectEqual(`${what}: onTimeout calls after more time`, fired, n)
  checkStats(what, watchdog.stats(), { guarded: n, timedOut: n, lateCompletions: n })
  expectEqual(`${what}: timers pending on the wheel`, watchdog.pendingTimers, 0)
  expectEqual(`${what}: timers pending on the clock`, clock.pending, 0)
  return { ns: ((t1 - t0) * 1e6) / n, bytes: Number.NaN }
}

function runCase(id: CaseId, n: number): Sample {
  switch (id) {
    case 'unread':
      return guardAndDone(n, false)
    case 'read':
      return guardAndDone(n, true)
    case 'abort-timeout':
      return abortSignalTimeout(n)
    case 'fire':
      return timeoutFires(n)
  }
}

function verdict(id: CaseId, ns: number, bytes: number): string {
  if (id !== 'unread' && id !== 'read') return '—'
  return ns <= TARGET_NS && bytes <= TARGET_BYTES
    ? 'met'
    : `NOT met${ns > TARGET_NS ? ' (time)' : ''}${bytes > TARGET_BYTES ? ' (bytes)' : ''}`
}

async function main(args: string[]): Promise<void> {
  if (!ensureExposedGc()) return // re-ran itself with --expose-gc
  const smoke = args.includes('--smoke')
  const n = smoke ? 5_000 : 100_000
  const rounds = smoke ? 1 : 5
  // Warm-up (not counted): every case once on a smaller size, so the rounds run optimized code.
  for (const c of CASES) if (c.id !== 'abort-timeout') runCase(c.id, Math.min(n, 20_000))
  const samples = new Map<CaseId, Sample[]>(CASES.map((c) => [c.id, []]))
  // Interleaved: round 1 of every case, then round 2 …, so drift hits all cases alike.
  // Case by case, AbortSignal.timeout last: its 100k real timers stay armed for 5 s and cannot be
  // disposed, so interleaving it would slow (and skew) every case measured after it.
  for (const c of CASES) {
    for (let round = 0; round < rounds; round++) samples.get(c.id)?.push(runCase(c.id, n))
  }
  const medians = new Map<CaseId, Sample>(
    CASES.map((c) => {
      const s = samples.get(c.id) ?? []
      const bytes = s.map((x) => x.bytes).filter((b) => !Number.isNaN(b))
      return [c.id, { ns: median(s.map((x) => x.ns)), bytes: bytes.length > 0 ? median(bytes) : Number.NaN }]
    }),
  )
  const base = medians.get('abort-timeout') as Sample
  const table = renderTable(
    [
      { header: 'case', align: 'left' },
      { header: 'ns / message', align: 'right' },
      { header: 'B / pending', align: 'right' },
      { header: 'ns × AbortSignal.timeout', align: 'right' },
      { header: 'B × AbortSignal.timeout', align: 'right' },
      { header: 'target ≤ 1 µs, ≤ 200 B', align: 'left' },
    ],
    CASES.map((c) => {
      const m = medians.get(c.id) as Sample
      return [
        c.name,
        m.ns.toFixed(0),
        Number.isNaN(m.bytes) ? '—' : m.bytes.toFixed(0),
        formatRatio(m.ns / base.ns),
        Number.isNaN(m.bytes) ? '—' : formatRatio(m.bytes / base.bytes),
        verdict(c.id, m.ns, m.bytes),
      ]
    }),
  )
  const every = renderTable(
    [
      { header: 'case', align: 'left' },
      ...Array.from({ length: rounds }, (_, i) => ({ header: `round ${i + 1} ns / B`, align: 'right' as const })),
    ],
    CASES.map((c) => [
      c.name,
      ...(samples.get(c.id) ?? []).map(
        (s) => `${s.ns.toFixed(0)} / ${Number.isNaN(s.bytes) ? '—' : s.bytes.toFixed(0)}`,
      ),
    ]),
  )
  const workload = `${formatCount(n)} guards per round, median of ${rounds} round${rounds === 1 ? '' : 's'}`
  console.log(`Watchdog — cost per guarded message (${workload})\n`)
  console.log(table)
  console.log(`\nEvery round:\n\n${every}`)
  if (!smoke) {
    writeFileSync(
      RESULTS,
      [
        '# Benchmark results — watchdog',
        '',
        'Generated by `npx -y pnpm@12.4.2 --filter @flowing/benchmarks bench:watchdog` after `npx tsc -b` (runs `node dist/watchdog.js`).',
        `${formatCount(n)} guards per round, median of ${rounds} rounds after a warm-up (AbortSignal.timeout last); label \`{ type, key }\`, one`,
        '`Watchdog` per round. The other suites: [RESULTS.md](./RESULTS.md).',
        '',
        `- **Code:** ${codeRevision()}`,
        `- **Machine:** ${formatMachine(describeMachine())}`,
        `- **Date:** ${new Date().toISOString()}`,
        '',
        table,
        '',
        '- **ns / message**: guard rows time `guard({ timeoutMs: 5000, label })` for all N, then `done()` for all N',
        '  (standalone watchdog on the system clock); `AbortSignal.timeout` rows time creation only (a signal',
        '  cannot be disposed); the fired row times only the manual-clock `advance` that times out all N attempts',
        '  (`timeoutMs: 1`, building a `HandlerTimeoutError` and calling `onTimeout` each).',
        '- **B / pending**: heap growth per item with all N pending, after a full GC (the holding array excluded).',
        '- **× AbortSignal.timeout**: this row divided by the `AbortSignal.timeout(5000)` row (below 1× = cheaper).',
        '- Self-checks that passed: every `done()` won exactly once and a second one lost; every fired attempt',
        '  timed out exactly once and its late `done()` was counted; `stats()` matched exactly, no timer left.',
        '',
        '## Every round',
        '',
        every,
        '',
      ].join('\n'),
    )
    console.log(`\nWrote ${RESULTS.pathname}`)
  }
}

runSuite('watchdog', USAGE, main)
