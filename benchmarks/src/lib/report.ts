/**
 * Turns samples into the tables the benchmark prints and writes: throughput side by side with
 * ratios, bytes per queued message, and every run's raw figure (the targets: `targets.ts`).
 *
 * @module
 */
import { formatCount, formatMs, formatRate, formatRatio, median, spread } from './stats.js'
import type { Sample, Subject } from './subject.js'
import { renderTable } from './table.js'
import type { Mode } from './workload.js'

/** Every timed run of one subject. */
export interface CaseResult {
  readonly subject: Subject
  readonly burst: Sample[]
  readonly streamed: Sample[]
}

/** Bytes per queued message of one subject. */
export interface MemoryResult {
  readonly subject: Subject
  readonly bytesPerMessage: number
}

/** Ratio baselines: the rows every other row is compared with. */
export const BASELINES = { fastq: 'fastq-promise', pQueue: 'p-queue-priority', pQueuePlain: 'p-queue' } as const

/** The subject BRIEF §5's targets are about: the default loop (levels, 8 workers). */
export const FLOWING_DEFAULT = 'flowing-levels-w8'

/** Median messages per second of a mode, or NaN without samples. */
export function medianRate(n: number, samples: readonly Sample[]): number {
  return samples.length === 0 ? Number.NaN : median(samples.map((s) => n / s.seconds))
}

/** The run whose time is the median (lower middle for an even count): its queue-wait figures are shown. */
export function medianSample(samples: readonly Sample[]): Sample | undefined {
  const sorted = [...samples].sort((a, b) => a.seconds - b.seconds)
  return sorted[(sorted.length - 1) >> 1]
}

/** Median rate of case `id` in `mode`, or NaN when the case did not run. */
export function rateOf(results: readonly CaseResult[], id: string, mode: Mode, n: number): number {
  const found = results.find((r) => r.subject.id === id)
  return found === undefined ? Number.NaN : medianRate(n, found[mode])
}

function waitCell(samples: readonly Sample[]): string {
  const wait = medianSample(samples)?.queueWait
  return wait === undefined ? '—' : `${formatMs(wait.p50)} / ${formatMs(wait.p99)}`
}

/** Throughput: medians, ratios against fastq's promise API and p-queue with priorities, queue waits. */
export function throughputTable(n: number, results: readonly CaseResult[]): string {
  const fastq = {
    burst: rateOf(results, BASELINES.fastq, 'burst', n),
    streamed: rateOf(results, BASELINES.fastq, 'streamed', n),
  }
  const pq = {
    burst: rateOf(results, BASELINES.pQueue, 'burst', n),
    streamed: rateOf(results, BASELINES.pQueue, 'streamed', n),
  }
  const rows = results.map((r) => {
    const burst = medianRate(n, r.burst)
    const streamed = medianRate(n, r.streamed)
    const post = median(r.burst.map((s) => s.postSeconds))
    return [
      r.subject.label,
      formatRate(burst),
      formatRate(streamed),
      ((post * 1e9) / n).toFixed(0),
      `${formatRatio(burst / fastq.burst)} / ${formatRatio(streamed / fastq.streamed)}`,
      `${formatRatio(burst / pq.burst)} / ${formatRatio(streamed / pq.streamed)}`,
      waitCell(r.burst),
      waitCell(r.streamed),
    ]
  })
  return renderTable(
    [
      { header: 'case', align: 'left' },
      { header: 'burst M/s', align: 'right' },
      { header: 'streamed M/s', align: 'right' },
      { header: 'post ns/msg', align: 'right' },
      { header: '× fastq promise: burst / streamed', align: 'right' },
      { header: '× p-queue prio: burst / streamed', align: 'right' },
      { header: 'wait p50 / p99 ms: burst', align: 'right' },
      { header: 'wait p50 / p99 ms: streamed', align: 'right' },
    ],
    rows,
  )
}

/** Bytes per queued message, with ratios against fastq's promise API and p-queue. */
export function memoryTable(results: readonly MemoryResult[]): string {
  const of = (id: string): number => results.find((r) => r.subject.id === id)?.bytesPerMessage ?? Number.NaN
  const fastq = of(BASELINES.fastq)
  const pq = of(BASELINES.pQueuePlain)
  return renderTable(
    [
      { header: 'case (paused, 1 queued message = small-integer payload)', align: 'left' },
      { header: 'bytes / queued msg', align: 'right' },
      { header: '× fastq promise', align: 'right' },
      { header: '× p-queue', align: 'right' },
    ],
    results.map((r) => [
      r.subject.label,
      r.bytesPerMessage.toFixed(0),
      formatRatio(r.bytesPerMessage / fastq),
      formatRatio(r.bytesPerMessage / pq),
    ]),
  )
}

/** Every run's figure (M msg/s) and the run-to-run spread, so a reader can judge the noise. */
export function samplesTable(n: number, results: readonly CaseResult[]): string {
  const list = (samples: readonly Sample[]): string => samples.map((s) => formatRate(n / s.seconds)).join(', ')
  const spreadOf = (samples: readonly Sample[]): string =>
    samples.length < 2 ? '—' : `${(spread(samples.map((s) => n / s.seconds)) * 100).toFixed(0)} %`
  return renderTable(
    [
      { header: 'case', align: 'left' },
      { header: 'burst runs (M msg/s)', align: 'left' },
      { header: 'spread', align: 'right' },
      { header: 'streamed runs (M msg/s)', align: 'left' },
      { header: 'spread', align: 'right' },
    ],
    results.map((r) => [r.subject.label, list(r.burst), spreadOf(r.burst), list(r.streamed), spreadOf(r.streamed)]),
  )
}

/** The workload in one sentence, for headers. */
export function describeWorkload(n: number, runs: number, keyCount: number): string {
  return (
    `${formatCount(n)} no-op async messages per run (handler \`async () => {}\` + a counter), ` +
    `${formatCount(keyCount)} random keys, random priorities 0–9, concurrency 8 for peers; median of ${runs} run${runs === 1 ? '' : 's'}`
  )
}
