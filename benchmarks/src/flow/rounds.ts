/**
 * The interleaved rounds of the flow-control suite: a warm-up round, then round 1 of every case,
 * round 2 …, so drift in the machine hits all cases alike; a full GC before every run.
 *
 * @module
 */
import { collect } from '../lib/gc.js'
import { formatRate, formatRatio, median, spread } from '../lib/stats.js'
import { type Column, renderTable } from '../lib/table.js'

/** One case of a section: `run` processes `n` messages and returns the seconds it took. */
export interface FlowCase {
  readonly id: string
  readonly label: string
  readonly run: (n: number) => Promise<number>
}

/** A case's seconds per round. */
export interface CaseSamples {
  readonly flowCase: FlowCase
  readonly seconds: number[]
}

/** What a section runs: sizes, rounds, a progress log. */
export interface RoundPlan {
  readonly n: number
  readonly rounds: number
  /** Messages of the uncounted warm-up round. */
  readonly warmup: number
  readonly log: (line: string) => void
}

/** Runs every case once on `plan.warmup` messages (uncounted), then `plan.rounds` interleaved rounds. */
export async function interleave(plan: RoundPlan, cases: readonly FlowCase[]): Promise<CaseSamples[]> {
  for (const c of cases) await c.run(plan.warmup)
  const out = cases.map((flowCase) => ({ flowCase, seconds: [] as number[] }))
  for (let round = 1; round <= plan.rounds; round++) {
    for (const s of out) {
      collect()
      const seconds = await s.flowCase.run(plan.n)
      s.seconds.push(seconds)
      const rate = formatRate(plan.n / seconds).padStart(7)
      plan.log(`  round ${round}/${plan.rounds}  ${s.flowCase.label.padEnd(56)} ${rate} M msg/s`)
    }
  }
  return out
}

/** Median ns per message of a case. */
export function nsPerMessage(s: CaseSamples, n: number): number {
  return (median(s.seconds) * 1e9) / n
}

/** `12 %`: the spread of a case's rounds, (max − min) / median. */
export function spreadPercent(s: CaseSamples): string {
  return `${(spread(s.seconds) * 100).toFixed(0)} %`
}

const COLUMNS: readonly Column[] = [
  { header: 'case', align: 'left' },
  { header: 'ns/msg', align: 'right' },
  { header: 'M msgs/s', align: 'right' },
  { header: 'extra ns/msg', align: 'right' },
  { header: '× baseline time', align: 'right' },
  { header: 'spread', align: 'right' },
]

/**
 * The table of a section: each row's median ns/msg and rate, its extra ns/msg over `baseline`'s row
 * and the ratio of their times (above 1× = slower than the baseline).
 */
export function costTable(samples: readonly CaseSamples[], n: number, baseline: (s: CaseSamples) => CaseSamples) {
  const rows = samples.map((s) => {
    const ns = nsPerMessage(s, n)
    const base = nsPerMessage(baseline(s), n)
    const same = baseline(s) === s
    return [
      s.flowCase.label,
      ns.toFixed(0),
      formatRate(1e9 / ns),
      same ? '—' : `${ns - base >= 0 ? '+' : ''}${(ns - base).toFixed(0)}`,
      same ? '(baseline)' : formatRatio(ns / base),
      spreadPercent(s),
    ]
  })
  return renderTable(COLUMNS, rows)
}

/** Every round's ns/msg, for the results file. */
export function roundsTable(samples: readonly CaseSamples[], n: number): string {
  const rounds = samples[0]?.seconds.length ?? 0
  const columns: Column[] = [
    { header: 'case', align: 'left' },
    ...Array.from({ length: rounds }, (_, i) => ({ header: `round ${i + 1}`, align: 'right' as const })),
  ]
  const rows = samples.map((s) => [s.flowCase.label, ...s.seconds.map((t) => ((t * 1e9) / n).toFixed(0))])
  return renderTable(columns, rows)
}
