/**
 * The scaling suite's figures: one dimension (a size swept over, several quantities measured at
 * each size, several runs of each), its Markdown table, its verdict lines and its SVG chart.
 *
 * @module
 */
import { renderLineChart } from '../lib/line-chart.js'
import { formatCount, formatRatio, median } from '../lib/stats.js'
import { renderTable } from '../lib/table.js'

/** No size above this factor of any smaller size's figure: `flat`. */
export const FLAT_WITHIN = 1.5
/** Above {@link FLAT_WITHIN} but no size above this factor of any smaller one: `logarithmic`; above it: `grows`. */
export const LOG_WITHIN = 3

/** One size of a dimension and what was measured there. */
export interface Point {
  readonly size: number
  /** Per quantity (in the dimension's order), ns per operation of every run. */
  readonly runs: readonly (readonly number[])[]
  /** A note for the table's note column (e.g. how many keys were used). */
  readonly note?: string
}

/** One scaling dimension. */
export interface Dimension {
  /** File-name id: the chart is `charts/scaling-<id>.svg`. */
  readonly id: string
  readonly title: string
  /** What the size counts, e.g. `messages queued`. */
  readonly sizeLabel: string
  /** The measured quantities' labels, short (chart legend). */
  readonly quantities: readonly string[]
  /** Header of the note column; none when undefined. */
  readonly noteHeader?: string
  readonly points: readonly Point[]
}

/** The verdict on one quantity's curve. */
export type Shape = 'flat' | 'logarithmic' | 'grows'

/** One quantity's curve, judged. */
export interface Verdict {
  readonly quantity: string
  /** The largest size's median over the smallest size's. */
  readonly largestRatio: number
  /**
   * The largest rise: the highest ratio of a size's median to the lowest median of the sizes below
   * it (and itself), so a curve that falls first (a fixed cost amortized) and then climbs is caught.
   */
  readonly rise: number
  readonly shape: Shape
}

/** Medians of a point, per quantity. */
export function medians(point: Point): number[] {
  return point.runs.map((samples) => median(samples))
}

/** Judges every quantity of `dim` by the rule {@link FLAT_WITHIN} / {@link LOG_WITHIN}. */
export function verdicts(dim: Dimension): Verdict[] {
  const rows = dim.points.map(medians)
  const first = rows[0] ?? []
  return dim.quantities.map((quantity, q) => {
    const values = rows.map((row) => row[q] as number)
    let lowest = Number.POSITIVE_INFINITY
    let rise = 1
    for (const v of values) {
      lowest = Math.min(lowest, v)
      rise = Math.max(rise, v / lowest)
    }
    const shape: Shape = rise <= FLAT_WITHIN ? 'flat' : rise <= LOG_WITHIN ? 'logarithmic' : 'grows'
    return { quantity, largestRatio: (values.at(-1) as number) / (first[q] as number), rise, shape }
  })
}

/** The rule, as the results file and the console state it. */
export const VERDICT_RULE = `take the largest *rise* — a size's median over the lowest median at that size or any smaller one (so a cost that falls at first, a fixed cost amortized, and then climbs is judged by the climb) — then **flat**: rise ≤ ${FLAT_WITHIN}×; **logarithmic**: rise ≤ ${LOG_WITHIN}× (a cost proportional to log n rises 2× from 1k to 1M); **grows**: rise above ${LOG_WITHIN}×`

/** `dim`'s table: size, the note, then per quantity its median ns and its ratio to the smallest size. */
export function dimensionTable(dim: Dimension): string {
  const note = dim.noteHeader
  const columns = [
    { header: dim.sizeLabel, align: 'right' as const },
    ...(note === undefined ? [] : [{ header: note, align: 'right' as const }]),
    ...dim.quantities.flatMap((q) => [
      { header: `${q} ns`, align: 'right' as const },
      { header: '× smallest', align: 'right' as const },
    ]),
  ]
  const first = medians(dim.points[0] as Point)
  const rows = dim.points.map((point) => {
    const values = medians(point)
    return [
      formatCount(point.size),
      ...(note === undefined ? [] : [point.note ?? '']),
      ...values.flatMap((v, q) => [formatNs(v), formatRatio(v / (first[q] as number))]),
    ]
  })
  return renderTable(columns, rows)
}

/** One line per quantity: `- post + drain: 1,000,000 costs 0.71× of 1,000 (within 3×; largest rise 1.2×) → **flat**`. */
export function verdictLines(dim: Dimension): string {
  const smallest = formatCount(dim.points[0]?.size ?? 0)
  const largest = formatCount(dim.points.at(-1)?.size ?? 0)
  return verdicts(dim)
    .map(
      (v) =>
        `- ${v.quantity}: ${largest} costs ${formatRatio(v.largestRatio)} of ${smallest} (${v.largestRatio <= LOG_WITHIN ? 'within' : '**not** within'} ${LOG_WITHIN}×; largest rise over a smaller size ${formatRatio(v.rise)}) → **${v.shape}**`,
    )
    .join('\n')
}

/** `dim` as an SVG line chart: x = size (log scale), y = median ns, one line per quantity. */
export function dimensionChart(dim: Dimension): string {
  return renderLineChart({
    title: `${dim.title}: ns per operation`,
    xLabel: dim.sizeLabel,
    yLabel: 'ns (median)',
    series: dim.quantities.map((label, q) => ({
      label,
      points: dim.points.map((p) => [p.size, medians(p)[q] as number] as const),
    })),
  })
}

/** ns, short: `38.2`, `412`, `1,204`. */
export function formatNs(ns: number): string {
  return ns >= 100 ? formatCount(Math.round(ns)) : ns.toFixed(1)
}
