/**
 * One SVG step chart of the worker count over time, in the style of `@flowing/tune`'s charts (its
 * `renderChart` plots against worker count on a log axis, not against time, so it cannot be reused
 * as is): hand-written, no dependency.
 *
 * @module
 */

const W = 560
const H = 300
const M = { left: 60, right: 20, top: 36, bottom: 44 }

/** A step chart of `points` ([seconds, workers]) with a dashed reference line at `knee`. */
export function renderWorkersChart(
  title: string,
  points: readonly (readonly [number, number])[],
  knee: number | undefined,
): string {
  const tMax = Math.max(1, ...points.map((p) => p[0]))
  const yMax = Math.max(4, knee ?? 0, ...points.map((p) => p[1])) * 1.1
  const px = (t: number): number => M.left + (t / tMax) * (W - M.left - M.right)
  const py = (y: number): number => H - M.bottom - (y / yMax) * (H - M.top - M.bottom)
  const path: string[] = []
  for (const [i, [t, y]] of points.entries()) {
    const previous = points[i - 1]
    if (previous !== undefined) path.push(`L${px(t).toFixed(1)},${py(previous[1]).toFixed(1)}`)
    path.push(`${i === 0 ? 'M' : 'L'}${px(t).toFixed(1)},${py(y).toFixed(1)}`)
  }
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => Math.round(f * yMax))
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<title>${title}</title>`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="20" text-anchor="middle" font-size="14" font-weight="bold">${title}</text>`,
    ...ticks.map(
      (y) =>
        `<line x1="${M.left}" x2="${W - M.right}" y1="${py(y)}" y2="${py(y)}" stroke="#eee"/><text x="${M.left - 6}" y="${py(y) + 4}" text-anchor="end">${y}</text>`,
    ),
    `<text x="${W / 2}" y="${H - 8}" text-anchor="middle">seconds</text>`,
    `<text x="${M.left}" y="${H - M.bottom + 16}" text-anchor="middle">0</text>`,
    `<text x="${W - M.right}" y="${H - M.bottom + 16}" text-anchor="middle">${tMax.toFixed(0)}</text>`,
    `<text transform="translate(14 ${H / 2}) rotate(-90)" text-anchor="middle">workers</text>`,
  ]
  if (knee !== undefined) {
    parts.push(
      `<line x1="${M.left}" x2="${W - M.right}" y1="${py(knee)}" y2="${py(knee)}" stroke="#c33" stroke-dasharray="5,4"/>`,
      `<text x="${W - M.right}" y="${py(knee) - 4}" text-anchor="end" fill="#c33">tuner's knee ${knee}</text>`,
    )
  }
  parts.push(`<path d="${path.join(' ')}" fill="none" stroke="#2563eb" stroke-width="2"/>`, '</svg>')
  return `${parts.join('\n')}\n`
}
