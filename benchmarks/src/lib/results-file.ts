/**
 * `benchmarks/RESULTS.md`: the tables of one full run plus everything needed to judge them — the
 * machine, the runtime, the date and the exact command.
 *
 * @module
 */
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { formatMachine, type Machine } from './machine.js'

/** Where the results go: `benchmarks/RESULTS.md`, next to this package's `dist/`. */
export const RESULTS_PATH = fileURLToPath(new URL('../../RESULTS.md', import.meta.url))

/** The sections of one run, already rendered. */
export interface ResultsDocument {
  readonly command: string
  readonly machine: Machine
  readonly revision: string
  readonly date: Date
  readonly workload: string
  readonly invariants: readonly string[]
  readonly throughput: string
  readonly memory: string
  readonly targets: string
  readonly samples: string
  readonly seconds: number
}

/** Renders the document. */
export function renderResults(doc: ResultsDocument): string {
  return `# Benchmark results — \`core-throughput\`

Generated file: do not edit by hand; re-run the command below to refresh it. How to read it:
[README.md](./README.md). Figures drift 10–30 % run to run — compare the **ratios** within this
file, never absolute figures across machines or runs. The timing-wheel suite, the backpressure flood, the workload shapes, the watchdog, the shutdown and the durable suites write their own files:
[RESULTS-timing-wheel.md](./RESULTS-timing-wheel.md), [RESULTS-flood.md](./RESULTS-flood.md), [RESULTS-workloads.md](./RESULTS-workloads.md), [RESULTS-watchdog.md](./RESULTS-watchdog.md), [RESULTS-shutdown.md](./RESULTS-shutdown.md), [RESULTS-durable.md](./RESULTS-durable.md).

- **Command:** ${doc.command}
- **Code:** commit ${doc.revision}
- **Machine:** ${formatMachine(doc.machine)}
- **Date:** ${doc.date.toISOString()} (whole run: ${doc.seconds.toFixed(0)} s)
- **Workload:** ${doc.workload}

## Throughput

*Burst*: all messages posted in one synchronous loop, then drained. *Streamed*: 1,000 posts per
event-loop turn (\`setImmediate\`), so the queue stays shallow. Ratios divide this row's median by the
baseline's median from this same run.

${doc.throughput}

## Bytes per queued message

${doc.memory}

## BRIEF §5 targets

${doc.targets}

## Self-checks that passed

${doc.invariants.map((line) => `- ${line}`).join('\n')}
- every timed run: processed count = posted count; for Flowing also \`posted = accepted = succeeded\`, no
  rejected/failed/dropped/cancelled, nothing left queued or running

## Every run

${doc.samples}
`
}

/** Writes {@link RESULTS_PATH}. */
export function writeResults(doc: ResultsDocument): string {
  writeFileSync(RESULTS_PATH, renderResults(doc))
  return RESULTS_PATH
}
