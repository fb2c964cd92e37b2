/**
 * `benchmarks/RESULTS-timing-wheel.md`: the tables of one full timing-wheel run plus what is needed
 * to judge them. A file of its own, so each suite rewrites only its own results; `RESULTS.md` links
 * to it.
 *
 * @module
 */
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { formatMachine, type Machine } from './machine.js'

/** Where the results go: `benchmarks/RESULTS-timing-wheel.md`. */
export const WHEEL_RESULTS_PATH = fileURLToPath(new URL('../../RESULTS-timing-wheel.md', import.meta.url))

/** The sections of one run, already rendered. */
export interface WheelResultsDocument {
  readonly command: string
  readonly machine: Machine
  readonly revision: string
  readonly date: Date
  readonly workload: string
  readonly ops: string
  readonly fire: string
  readonly lateness: string
  readonly memory: string
  readonly targets: string
  readonly checks: readonly string[]
  readonly seconds: number
}

/** Renders the document. */
export function renderWheelResults(doc: WheelResultsDocument): string {
  return `# Benchmark results — \`timing-wheel\`

Generated file: do not edit by hand; re-run the command below to refresh it. How to read it:
[README.md](./README.md#what-timing-wheel-measures). Figures drift 10–30 % run to run — compare the
**ratios** to \`setTimeout\` within this file, never absolute figures across machines or runs. The
core suite's results are in [RESULTS.md](./RESULTS.md).

- **Command:** ${doc.command}
- **Code:** commit ${doc.revision}
- **Machine:** ${formatMachine(doc.machine)}
- **Date:** ${doc.date.toISOString()} (whole run: ${doc.seconds.toFixed(0)} s)
- **Workload:** ${doc.workload}

## Schedule and cancel

Median ns per operation. Handles are pushed into a plain array (both subjects), then cancelled in
schedule order or in a random order. The wheel reads \`performance.now()\` per \`schedule()\`; the lean
\`add()\` takes an absolute deadline.

${doc.ops}

## Fire

*Virtual clock*: \`advance()\` alone, every 1 ms across the spread or once at the end (a catch-up
after a stall). *Real clock*: CPU time of the process from the end of scheduling to the last
delivery, per timer, each delivery reading \`performance.now()\` once (setTimeout gets a closure per
timer, the wheel an integer item).

${doc.fire}

## Lateness on the real clock

Delivery time (\`performance.now()\`) minus deadline (\`performance.now()\` at scheduling + delay), for
every timer. Negative = early.

${doc.lateness}

## Bytes per pending timer

JS heap plus \`ArrayBuffer\` memory after a full collection, with the timers pending, minus the same
before, per timer. "Kept" includes the caller's array of handles (8 B a slot) or \`Float64Array\` of ids.

${doc.memory}

## BRIEF §5 targets

${doc.targets}

## Self-checks that passed

${doc.checks.map((line) => `- ${line}`).join('\n')}
`
}

/** Writes {@link WHEEL_RESULTS_PATH}. */
export function writeWheelResults(doc: WheelResultsDocument): string {
  writeFileSync(WHEEL_RESULTS_PATH, renderWheelResults(doc))
  return WHEEL_RESULTS_PATH
}
