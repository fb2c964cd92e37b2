/**
 * What the workers' records say about a run: how many messages ran (and how many more than once), the
 * first start and the last acknowledgement, per-key order (a later message of a key that started
 * before an earlier one is a violation; one that started before the earlier one ended is an overlap),
 * and the post-to-start latencies.
 *
 * @module
 */
import type { Records } from './protocol.js'

/** The account of one run. */
export interface RunAccount {
  /** Distinct messages that ran. */
  readonly distinct: number
  /** Handler starts, redeliveries included. */
  readonly starts: number
  /** Per-key order violations: a later message of a key started before an earlier one. */
  readonly violations: number
  /** A message of a key started before the previous one of its key ended. */
  readonly overlaps: number
  /** First handler start, last end (epoch ms). */
  readonly firstStart: number
  readonly lastEnd: number
  /** Starts per process. */
  readonly perProcess: readonly number[]
  /** Post-to-start latency of every first start (ms), sorted. */
  readonly latencies: Float64Array
}

interface Start {
  readonly ks: number
  readonly start: number
  readonly end: number
}

function byKey(all: readonly Records[]): Map<number, Start[]> {
  const keys = new Map<number, Start[]>()
  for (const r of all) {
    for (let i = 0; i < r.start.length; i++) {
      const k = r.ki[i] as number
      const list = keys.get(k) ?? []
      if (list.length === 0) keys.set(k, list)
      list.push({ ks: r.ks[i] as number, start: r.start[i] as number, end: r.end[i] as number })
    }
  }
  return keys
}

/** Per-key order over every process's starts (a redelivery of the same message is not a violation). */
export function orderCheck(all: readonly Records[]): { violations: number; overlaps: number } {
  let violations = 0
  let overlaps = 0
  for (const list of byKey(all).values()) {
    list.sort((a, b) => a.start - b.start)
    let highest = -1
    let prevEnd = Number.NEGATIVE_INFINITY
    for (const s of list) {
      if (s.ks < highest) violations++
      if (s.start < prevEnd) overlaps++
      highest = Math.max(highest, s.ks)
      if (!Number.isNaN(s.end)) prevEnd = s.end
    }
  }
  return { violations, overlaps }
}

/** The account of a run from every worker's records. */
export function account(all: readonly Records[]): RunAccount {
  const seen = new Map<number, number>()
  let firstStart = Number.POSITIVE_INFINITY
  let lastEnd = Number.NEGATIVE_INFINITY
  for (const r of all) {
    for (let i = 0; i < r.start.length; i++) {
      const seq = r.seq[i] as number
      const start = r.start[i] as number
      const latency = start - (r.posted[i] as number)
      const before = seen.get(seq)
      if (before === undefined || latency < before) seen.set(seq, latency)
      firstStart = Math.min(firstStart, start)
      const end = r.end[i] as number
      if (!Number.isNaN(end)) lastEnd = Math.max(lastEnd, end)
    }
  }
  const latencies = Float64Array.from(seen.values()).sort()
  return {
    distinct: seen.size,
    starts: all.reduce((sum, r) => sum + r.start.length, 0),
    ...orderCheck(all),
    firstStart,
    lastEnd,
    perProcess: all.map((r) => r.start.length),
    latencies,
  }
}

/** The `q` quantile (0–1) of a sorted sample. */
export function quantile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return Number.NaN
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number
}
