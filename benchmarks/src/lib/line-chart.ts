/**
 * A small SVG line chart with several series against a logarithmic x axis (sizes that grow ten- or
 * a hundredfold a step), y from zero: hand-written strings, no dependency, in the style of
 * `@flowing/tune`'s `renderChart` (one series against worker count) and `autoscale/chart.ts`.
 *
 * @module
 */

const W = 600
const H = 300
const M = { left: 64, right: 165, top: 36, bottom: 44 }
const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c']

/** One line: its legend label and its points, `[x, y]` with `x > 0`. */
export interface Series {
  readonly label: string
  readonly points: readonly (readonly [number, number])[]
}

/** What {@link renderLineChart} draws. */
export interface LineChartSpec {
  /** The chart's title (also its SVG `<title>`). */
  readonly title: string
  readonly xLabel: string
  readonly yLabel: string
  /** One line per series, coloured in order; a legend at the right names them. */
  readonly series: readonly Series[]
}

interface Frame {
  readonly px: (x: number) => number
  readonly py: (y: number) => number
  readonly xs: readonly number[]
  readonly yTicks: readonly number[]
}

/** Renders `spec` as an SVG document: x on a log10 scale (a tick at each x that occurs), y linear from 0. */
export function renderLineChart(spec: LineChartSpec): string {
  const frame = frameOf(spec.series)
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<title>${escapeXml(spec.title)}</title>`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${(W - M.right + M.left) / 2}" y="20" text-anchor="middle" font-size="14" font-weight="bold">${escapeXml(spec.title)}</text>`,
    ...axes(frame, spec),
    ...spec.series.flatMap((s, i) => line(frame, s, COLORS[i % COLORS.length] as string, i)),
    '</svg>',
    '',
  ]
  return parts.join('\n')
}

function frameOf(series: readonly Series[]): Frame {
  const xs = [...new Set(series.flatMap((s) => s.points.map((p) => p[0])))].sort((a, b) => a - b)
  const lo = Math.log10(xs[0] ?? 1)
  const hi = Math.max(Math.log10(xs.at(-1) ?? 10), lo + 1)
  const top = Math.max(...series.flatMap((s) => s.points.map((p) => p[1])), 0) * 1.1
  const step = niceCeil(top / 4)
  const count = Math.max(1, Math.ceil(top / step))
  const yMax = step * count
  return {
    xs,
    yTicks: Array.from({ length: count + 1 }, (_, i) => step * i),
    px: (x) => r(M.left + ((Math.log10(x) - lo) / (hi - lo)) * (W - M.left - M.right)),
    py: (y) => r(H - M.bottom - (y / yMax) * (H - M.top - M.bottom)),
  }
}

function axes(frame: Frame, spec: LineChartSpec): string[] {
  const { px, py } = frame
  const right = W - M.right
  return [
    ...frame.yTicks.map(
      (y) =>
        `<line x1="${M.left}" x2="${right}" y1="${py(y)}" y2="${py(y)}" stroke="#ddd"/><text x="${M.left - 6}" y="${py(y) + 4}" text-anchor="end">${formatTick(y)}</text>`,
    ),
    ...frame.xs.map(
      (x) =>
        `<line x1="${px(x)}" x2="${px(x)}" y1="${M.top}" y2="${H - M.bottom}" stroke="#f0f0f0"/><text x="${px(x)}" y="${H - M.bottom + 18}" text-anchor="middle">${formatTick(x)}</text>`,
    ),
    `<text x="${(right + M.left) / 2}" y="${H - 6}" text-anchor="middle">${escapeXml(spec.xLabel)} (log scale)</text>`,
    `<text x="16" y="${H / 2}" text-anchor="middle" transform="rotate(-90 16 ${H / 2})">${escapeXml(spec.yLabel)}</text>`,
  ]
}

function line(frame: Frame, series: Series, color: string, index: number): string[] {
  const { px, py } = frame
  const sorted = [...series.points].sort((a, b) => a[0] - b[0])
  const points = sorted.map(([x, y]) => `${px(x)},${py(y)}`).join(' ')
  const legendY = M.top + 10 + index * 20
  return [
    `<polyline points="${points}" fill="none" stroke="${color}" stroke-width="2"/>`,
    ...sorted.map(([x, y]) => `<circle cx="${px(x)}" cy="${py(y)}" r="3.5" fill="${color}"/>`),
    `<line x1="${W - M.right + 12}" x2="${W - M.right + 32}" y1="${legendY}" y2="${legendY}" stroke="${color}" stroke-width="2"/>`,
    `<text x="${W - M.right + 38}" y="${legendY + 4}" font-size="11">${escapeXml(series.label)}</text>`,
  ]
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
