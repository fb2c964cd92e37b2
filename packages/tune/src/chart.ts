/**
 * Two small SVG line charts — throughput and p99 against worker count — as hand-written strings: no
 * dependency, readable in any browser and on GitHub. The x axis is logarithmic (worker counts double).
 *
 * @module
 */
import type { SweepPoint } from './knee.js'

const W = 560
const H = 300
const M = { left: 70, right: 20, top: 36, bottom: 44 }

/**
 * Options of one chart of points `P`.
 *
 * @group Report
 */
export interface ChartSpec<P extends SweepPoint = SweepPoint> {
  /** The chart's title (also its SVG `<title>`). */
  readonly title: string
  /** The y axis label. */
  readonly yLabel: string
  /** The plotted value of a point (the median of its trials). */
  readonly value: (p: P) => number
  /** Min and max of a point's trials, drawn as a whisker through it; `undefined`: none for that point. */
  readonly range?: (p: P) => readonly [number, number] | undefined
  /** A horizontal reference line (the p99 target), drawn dashed. */
  readonly reference?: { readonly value: number; readonly label: string }
  /** The recommended worker count, marked on the curve. */
  readonly knee?: number | undefined
}

/**
 * Renders `points` as an SVG document, each with its min/max whisker when `spec.range` gives one.
 *
 * @group Report
 */
export function renderChart<P extends SweepPoint>(points: readonly P[], spec: ChartSpec<P>): string {
  const sorted = [...points].sort((a, b) => a.workers - b.workers)
  const xs = sorted.map((p) => Math.log2(p.workers))
  const ys = sorted.map(spec.value)
  const ranges = sorted.map((p) => spec.range?.(p))
  const xMin = Math.min(...xs)
  const xMax = Math.max(...xs, xMin + 1)
  // Ticks at a round step (1, 2, 2.5 or 5 × 10^k), four or five of them.
  const top = Math.max(...ys, ...ranges.map((w) => w?.[1] ?? 0), spec.reference?.value ?? 0) * 1.1
  const step = niceCeil(top / 4)
  const ticks = Math.max(1, Math.ceil(top / step))
  const yMax = step * ticks
  const px = (x: number): number => M.left + ((x - xMin) / (xMax - xMin)) * (W - M.left - M.right)
  const py = (y: number): number => H - M.bottom - (y / yMax) * (H - M.top - M.bottom)
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<title>${escapeXml(spec.title)}</title>`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="20" text-anchor="middle" font-size="14" font-weight="bold">${escapeXml(spec.title)}</text>`,
  ]
  for (let i = 0; i <= ticks; i++) {
    const y = step * i
    parts.push(
      `<line x1="${M.left}" x2="${W - M.right}" y1="${r(py(y))}" y2="${r(py(y))}" stroke="#ddd"/>`,
      `<text x="${M.left - 6}" y="${r(py(y)) + 4}" text-anchor="end">${formatTick(y)}</text>`,
    )
  }
  sorted.forEach((p, i) => {
    const x = r(px(xs[i] as number))
    parts.push(`<text x="${x}" y="${H - M.bottom + 18}" text-anchor="middle">${p.workers}</text>`)
  })
  parts.push(
    `<text x="${W / 2}" y="${H - 6}" text-anchor="middle">workers</text>`,
    `<text x="16" y="${H / 2}" text-anchor="middle" transform="rotate(-90 16 ${H / 2})">${escapeXml(spec.yLabel)}</text>`,
  )
  if (spec.reference !== undefined) {
    const y = r(py(spec.reference.value))
    parts.push(
      `<line x1="${M.left}" x2="${W - M.right}" y1="${y}" y2="${y}" stroke="#c33" stroke-dasharray="6 4"/>`,
      `<text x="${W - M.right}" y="${y - 5}" text-anchor="end" fill="#c33">${escapeXml(spec.reference.label)}</text>`,
    )
  }
  for (const [i, w] of ranges.entries())
    if (w !== undefined) parts.push(whisker(r(px(xs[i] as number)), r(py(w[0])), r(py(w[1]))))
  const path = sorted.map((_, i) => `${r(px(xs[i] as number))},${r(py(ys[i] as number))}`).join(' ')
  parts.push(`<polyline points="${path}" fill="none" stroke="#2563eb" stroke-width="2"/>`)
  sorted.forEach((p, i) => {
    const isKnee = p.workers === spec.knee
    const cx = r(px(xs[i] as number))
    const cy = r(py(ys[i] as number))
    parts.push(`<circle cx="${cx}" cy="${cy}" r="${isKnee ? 6 : 3.5}" fill="${isKnee ? '#16a34a' : '#2563eb'}"/>`)
    if (isKnee) parts.push(`<text x="${cx}" y="${cy - 10}" text-anchor="middle" fill="#16a34a">knee</text>`)
  })
  parts.push('</svg>', '')
  return parts.join('\n')
}

/** A vertical min–max line with caps at `x`, from `lo` to `hi` (pixel rows). */
function whisker(x: number, lo: number, hi: number): string {
  return (
    `<g class="whisker" stroke="#64748b"><line x1="${x}" x2="${x}" y1="${lo}" y2="${hi}"/>` +
    `<line x1="${x - 5}" x2="${x + 5}" y1="${lo}" y2="${lo}"/><line x1="${x - 5}" x2="${x + 5}" y1="${hi}" y2="${hi}"/></g>`
  )
}

function niceCeil(value: number): number {
  if (!(value > 0)) return 1
  const step = 10 ** Math.floor(Math.log10(value))
  for (const m of [1, 2, 2.5, 5, 10]) if (m * step >= value) return m * step
  return 10 * step
}

function formatTick(v: number): string {
  if (v >= 1e6) return `${+(v / 1e6).toPrecision(3)}M`
  if (v >= 1e3) return `${+(v / 1e3).toPrecision(3)}k`
  return `${+v.toPrecision(3)}`
}

const r = (v: number): number => Math.round(v * 10) / 10

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

/**
 * Renders `points` as a text chart for the terminal and the Markdown report: one bar a count (its
 * value, scaled to `width` columns), and under it, when `spec.range` gives one, the whisker of its
 * trials, `├──┼──┤` from min to max with `┼` at the value.
 *
 * @group Report
 */
export function renderAsciiChart<P extends SweepPoint>(points: readonly P[], spec: ChartSpec<P>, width = 40): string {
  const sorted = [...points].sort((a, b) => a.workers - b.workers)
  const top = Math.max(...sorted.map((p) => spec.range?.(p)?.[1] ?? spec.value(p)), Number.MIN_VALUE)
  const col = (v: number): number => Math.round((v / top) * width)
  const label = Math.max(...sorted.map((p) => String(p.workers).length))
  const lines = [`${spec.title} (${spec.yLabel}; bar: median, whisker: min–max of the trials)`]
  for (const p of sorted) {
    const value = spec.value(p)
    const bar = '█'.repeat(col(value))
    lines.push(`${String(p.workers).padStart(label)} │${bar.padEnd(width)} ${formatTick(value)}`)
    const range = spec.range?.(p)
    if (range === undefined || range[1] <= range[0]) continue
    // Column c holds the bar's c-th cell: a value ends on column col(v) − 1, as its bar does.
    const at = (v: number): number => Math.max(0, col(v) - 1)
    const row = Array.from({ length: width }, () => ' ')
    const [lo, hi, mid] = [at(range[0]), at(range[1]), at(value)]
    for (let c = lo; c <= hi; c++) row[c] = '─'
    row[lo] = '├'
    row[hi] = '┤'
    if (mid > lo && mid < hi) row[mid] = '┼'
    lines.push(
      `${' '.repeat(label)} │${row.join('').trimEnd().padEnd(width)} ${formatTick(range[0])}–${formatTick(range[1])}`,
    )
  }
  return lines.join('\n')
}
