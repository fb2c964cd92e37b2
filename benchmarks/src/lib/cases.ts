/**
 * Every case of `core-throughput`, by section, and the `--only` selection over all of them.
 *
 * @module
 */
import { UsageError } from './cli.js'
import { FEATURE_ROWS, type FeatureRow, featureSubject, PLAIN_ROW } from './features.js'
import { flowingSubject } from './flowing.js'
import { METRICS_CASES, type MetricsCase } from './metrics-cost.js'
import { fastqCallback, fastqPromise, pQueueSubject } from './peers.js'
import { REFUSAL_KINDS, type RefusalKind } from './refusals.js'
import type { Subject } from './subject.js'

/** The throughput table's rows, in table order. */
export const THROUGHPUT_SUBJECTS: readonly Subject[] = [
  flowingSubject({ queue: 'levels', workers: 1 }),
  flowingSubject({ queue: 'levels', workers: 4 }),
  flowingSubject({ queue: 'levels', workers: 8 }),
  flowingSubject({ queue: 'levels', workers: 8, keys: 'string' }),
  flowingSubject({ queue: 'heap', workers: 8 }),
  fastqPromise,
  fastqCallback,
  pQueueSubject(false),
  pQueueSubject(true),
]

/** The cases one run measures, by section. */
export interface Selection {
  readonly throughput: readonly Subject[]
  /** Feature-cost rows as subjects; the plain row comes with any other (it is their baseline). */
  readonly features: readonly Subject[]
  readonly refusals: readonly RefusalKind[]
  readonly metrics: readonly MetricsCase[]
}

/** Every case id, in `--help` order. */
export function allCaseIds(): string[] {
  return [
    ...THROUGHPUT_SUBJECTS.map((s) => s.id),
    ...FEATURE_ROWS.map((r) => r.id),
    ...REFUSAL_KINDS.map((k) => k.id),
    ...METRICS_CASES.map((m) => m.id),
  ]
}

/**
 * The cases whose id contains one of `only` (all when it is empty).
 * @throws UsageError when nothing matches
 */
export function selectCases(only: readonly string[]): Selection {
  const picked = <T extends { readonly id: string }>(list: readonly T[]): T[] =>
    only.length === 0 ? [...list] : list.filter((c) => only.some((o) => c.id.includes(o)))
  const rows: FeatureRow[] = picked(FEATURE_ROWS)
  const withPlain =
    rows.length === 0 || rows.some((r) => r.id === PLAIN_ROW)
      ? rows
      : FEATURE_ROWS.filter((r) => r.id === PLAIN_ROW || rows.includes(r))
  const selection: Selection = {
    throughput: picked(THROUGHPUT_SUBJECTS),
    features: withPlain.map(featureSubject),
    refusals: picked(REFUSAL_KINDS),
    metrics: picked(METRICS_CASES),
  }
  const count = Object.values(selection).reduce((sum, list: readonly unknown[]) => sum + list.length, 0)
  if (count === 0) throw new UsageError(`\`--only=${only.join(',')}\` matches no case id`)
  return selection
}
