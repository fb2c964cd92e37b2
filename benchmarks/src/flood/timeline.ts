/** Renders the flood's timeline and verdicts as text (terminal and Markdown alike). */
import { type Column, renderTable } from '../lib/table.js'
import type { FloodResult } from './scenario.js'

const right = (header: string): Column => ({ header, align: 'right' })

/** The timeline table. */
export function timelineTable(result: FloodResult): string {
  const bar = (fill: number) => '█'.repeat(Math.round(fill * 20)).padEnd(20, '·')
  return renderTable(
    [
      right('t (s)'),
      { header: 'fill', align: 'left' },
      right('fill %'),
      { header: 'level', align: 'left' },
      right('admitted'),
      right('shed'),
      right('rejected'),
      right('heap MB'),
    ],
    result.timeline.map((s) => [
      (s.atMs / 1000).toFixed(1),
      bar(s.fill),
      (s.fill * 100).toFixed(1),
      s.level,
      String(s.admitted),
      String(s.shed),
      String(s.rejected),
      s.heapMb.toFixed(1),
    ]),
  )
}

/** One paragraph of figures and verdicts. */
export function floodSummary(r: FloodResult): string {
  return [
    `offered ${Math.round(r.offeredPerSec)} msgs/s, processed ${Math.round(r.processedPerSec)} msgs/s (${(r.offeredPerSec / r.processedPerSec).toFixed(1)}× overload)`,
    `max fill ${(r.maxFill * 100).toFixed(1)} % · low priority shed ${r.lowShed}, rejected ${r.lowRejected} · urgent ${r.urgentProcessed}/${r.urgentSent} processed, ${r.urgentRefusals} refused · heap growth ${r.heapGrowthMb.toFixed(1)} MB`,
    r.failures.length === 0
      ? '✔ memory flat, fill ≤ 95 %, low priority shed first, no urgent message lost'
      : `✘ ${r.failures.join('; ')}`,
  ].join('\n')
}
