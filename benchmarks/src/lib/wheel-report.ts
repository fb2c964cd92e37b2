/**
 * The timing-wheel benchmark's tables: schedule/cancel, fire, lateness, memory, and the BRIEF §5
 * targets with verdicts. Speed-ups divide `setTimeout`'s figure by this row's, from the same run.
 *
 * @module
 */
import { formatCount, formatRatio, median } from './stats.js'
import { renderTable } from './table.js'
import type { LatenessSummary } from './wheel-fire.js'
import type { MemoryCase } from './wheel-memory.js'
import type { OpsSample } from './wheel-ops.js'

/** Schedule/cancel subjects, in table order. */
export type OpsCase = 'wheel schedule() / cancel()' | 'wheel add() / remove()' | 'setTimeout / clearTimeout'

/** Every run of one schedule/cancel case. */
export interface OpsResult {
  readonly kind: OpsCase
  readonly n: number
  readonly delays: string
  readonly samples: OpsSample[]
}

/** Fire costs at one size: virtual-clock runs of the wheel, real-clock CPU of both. */
export interface FireResult {
  readonly n: number
  readonly steps: number[]
  readonly catchUp: number[]
  readonly wheelCpu: number
  readonly nodeCpu: number
}

/** One real-clock lateness run. */
export interface LatenessResult {
  readonly subject: 'wheel' | 'setTimeout'
  readonly n: number
  readonly spreadMs: number
  readonly summary: LatenessSummary
}

/** Bytes per pending timer of one case at one size. */
export interface MemoryResult {
  readonly kind: MemoryCase
  readonly n: number
  readonly bytes: number
}

const ns = (v: number): string => (Number.isFinite(v) ? v.toFixed(0) : '—')
const ms3 = (v: number): string => v.toFixed(3)
const medianOf = (samples: readonly OpsSample[], key: keyof OpsSample): number => median(samples.map((s) => s[key]))

function nodeOps(results: readonly OpsResult[], r: OpsResult): OpsResult | undefined {
  return results.find((o) => o.kind === 'setTimeout / clearTimeout' && o.n === r.n && o.delays === r.delays)
}

/** Median ns/op per case, with speed-ups against setTimeout on the same delays and size. */
export function opsTable(results: readonly OpsResult[]): string {
  const rows = results.map((r) => {
    const node = nodeOps(results, r)
    const speedup = (key: keyof OpsSample): string =>
      node === undefined ? '—' : formatRatio(medianOf(node.samples, key) / medianOf(r.samples, key))
    return [
      r.kind,
      formatCount(r.n),
      r.delays,
      ns(medianOf(r.samples, 'schedule')),
      ns(medianOf(r.samples, 'cancelInOrder')),
      ns(medianOf(r.samples, 'cancelRandom')),
      `${speedup('schedule')} / ${speedup('cancelInOrder')} / ${speedup('cancelRandom')}`,
    ]
  })
  return renderTable(
    [
      { header: 'case', align: 'left' },
      { header: 'pending', align: 'right' },
      { header: 'delays', align: 'left' },
      { header: 'schedule ns', align: 'right' },
      { header: 'cancel ns, schedule order', align: 'right' },
      { header: 'cancel ns, random order', align: 'right' },
      { header: 'speed-up vs setTimeout: schedule / cancel / cancel random', align: 'right' },
    ],
    rows,
  )
}

/** ns per fired timer: virtual clock (wheel) and real-clock CPU (wheel driver vs setTimeout). */
export function fireTable(results: readonly FireResult[], spread: string): string {
  const rows = results.flatMap((r) => [
    [`wheel advance(), every 1 ms (virtual clock)`, formatCount(r.n), ns(median(r.steps)), '—'],
    [`wheel advance(), one catch-up call (virtual clock)`, formatCount(r.n), ns(median(r.catchUp)), '—'],
    [`wheel + WheelDriver, real clock (CPU)`, formatCount(r.n), ns(r.wheelCpu), formatRatio(r.nodeCpu / r.wheelCpu)],
    [`setTimeout, real clock (CPU)`, formatCount(r.n), ns(r.nodeCpu), formatRatio(1)],
  ])
  return renderTable(
    [
      { header: `case (delays ${spread})`, align: 'left' },
      { header: 'timers', align: 'right' },
      { header: 'ns per fired timer', align: 'right' },
      { header: 'speed-up vs setTimeout', align: 'right' },
    ],
    rows,
  )
}

/** Lateness against `performance.now()` on the real clock. */
export function latenessTable(results: readonly LatenessResult[]): string {
  return renderTable(
    [
      { header: 'timers', align: 'left' },
      { header: 'load', align: 'right' },
      { header: 'p50 ms', align: 'right' },
      { header: 'p99 ms', align: 'right' },
      { header: 'max ms', align: 'right' },
      { header: 'earliest ms', align: 'right' },
      { header: 'fired early', align: 'right' },
    ],
    results.map((r) => [
      r.subject === 'wheel' ? 'wheel + WheelDriver' : 'setTimeout',
      `${formatCount(r.n)} over ${r.spreadMs / 1000} s`,
      ms3(r.summary.p50),
      ms3(r.summary.p99),
      ms3(r.summary.max),
      ms3(r.summary.min),
      `${(r.summary.earlyShare * 100).toFixed(1)} %`,
    ]),
  )
}

/** Bytes per pending timer, with setTimeout's figure divided by each row's. */
export function memoryTable(results: readonly MemoryResult[]): string {
  return renderTable(
    [
      { header: 'case', align: 'left' },
      { header: 'pending', align: 'right' },
      { header: 'bytes / pending timer', align: 'right' },
      { header: 'setTimeout ÷ this', align: 'right' },
    ],
    results.map((r) => {
      const node = results.find((o) => o.kind === 'setTimeout' && o.n === r.n)?.bytes ?? Number.NaN
      return [r.kind, formatCount(r.n), r.bytes.toFixed(1), formatRatio(node / r.bytes)]
    }),
  )
}

/** Everything the targets table reads. */
export interface TargetInputs {
  readonly ops: readonly OpsResult[]
  readonly fire: readonly FireResult[]
  readonly memory: readonly MemoryResult[]
  readonly lateness: readonly LatenessResult[]
  /** Wheel timers fired early in every check of the run (virtual and real clock). */
  readonly early: number
  readonly delays: string
}

/** BRIEF §5's timing-wheel targets with this run's figures (all sizes), and verdicts. Never fails the run. */
export function targetsTable(t: TargetInputs): string {
  const sizes = [...new Set(t.fire.map((f) => f.n))]
  const ops = (kind: OpsCase, key: keyof OpsSample) =>
    sizes.map((n) => {
      const r = t.ops.find((o) => o.kind === kind && o.n === n && o.delays === t.delays)
      return r === undefined ? Number.NaN : medianOf(r.samples, key)
    })
  const handles: OpsCase = 'wheel schedule() / cancel()'
  const ids: OpsCase = 'wheel add() / remove()'
  const bytes = sizes.map((n) => t.memory.find((m) => m.kind === 'wheel, handles dropped' && m.n === n)?.bytes ?? NaN)
  const row = (target: string, values: number[], limit: number, unit: string): string[] => [
    target,
    values.map((v) => `${unit === 'B' ? v.toFixed(1) : ns(v)} ${unit}`).join(' / '),
    values.some(Number.isNaN) ? 'not measured' : values.every((v) => v <= limit) ? 'met' : 'NOT met',
  ]
  const wheelLate = t.lateness.filter((l) => l.subject === 'wheel')
  return renderTable(
    [
      { header: `BRIEF §5 target (${sizes.map(formatCount).join(' / ')} pending, delays ${t.delays})`, align: 'left' },
      { header: 'this run', align: 'right' },
      { header: 'verdict', align: 'left' },
    ],
    [
      row('schedule ≤ 150 ns: schedule(), handle kept', ops(handles, 'schedule'), 150, 'ns'),
      row('schedule ≤ 150 ns: add(), lean API', ops(ids, 'schedule'), 150, 'ns'),
      row('cancel ≤ 60 ns, schedule order: Timeout.cancel()', ops(handles, 'cancelInOrder'), 60, 'ns'),
      row('cancel ≤ 60 ns, schedule order: remove(id)', ops(ids, 'cancelInOrder'), 60, 'ns'),
      row('cancel ≤ 60 ns, random order: Timeout.cancel()', ops(handles, 'cancelRandom'), 60, 'ns'),
      row('cancel ≤ 60 ns, random order: remove(id)', ops(ids, 'cancelRandom'), 60, 'ns'),
      row('fire ≤ 100 ns, advance() every 1 ms', median2(t.fire, 'steps'), 100, 'ns'),
      row('fire ≤ 100 ns, one catch-up advance()', median2(t.fire, 'catchUp'), 100, 'ns'),
      row('≤ 48 B per pending timer (handles dropped)', bytes, 48, 'B'),
      [
        'never early',
        `${t.early} early of ${formatCount(wheelLate.reduce((k, l) => k + l.n, 0))} on the real clock + all virtual`,
        t.early === 0 ? 'met' : 'NOT met',
      ],
    ],
  )
}

function median2(fire: readonly FireResult[], key: 'steps' | 'catchUp'): number[] {
  return fire.map((f) => median(f[key]))
}
