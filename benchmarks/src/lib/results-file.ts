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
  readonly features: string
  readonly refusals: string
  readonly metrics: string
  readonly targets: string
  readonly samples: string
  readonly featureSamples: string
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

## Feature cost

ns per message of one Flowing loop with one feature on (or all of them), beside the plain row, in the
same run: the ratio is the figure to read.

${doc.features}

## Refused \`tryPost\`

ns per refused call, the loop held in its refusing state; the probe pass counts the errors built while
the results are made (a refusal should build none until its \`error\` is read).

${doc.refusals}

## \`metrics()\`

µs per \`loop.metrics()\` call, median of the runs.

${doc.metrics}

## BRIEF §5 targets

${doc.targets}

## Self-checks that passed

${doc.invariants.map((line) => `- ${line}`).join('\n')}
- every timed run: processed count = posted count; for Flowing also \`posted = accepted = succeeded\`, no
  rejected/failed/dropped/cancelled, nothing left queued or running
- feature rows: no retry and no duplicate counted; the feature was on (a re-post of the last
  idempotency key is refused as a duplicate; backpressure admitted all N at level normal; \`traces: 'all'\`
  kept a trace of a message that succeeded)
- refused \`tryPost\`: every call returned the expected status; \`posted = accepted + rejected\`, the
  shed and duplicate counters match the calls, and the admitted messages then ran
- \`metrics()\`: the filled loop's histograms hold one queue wait and one handler time per message, on
  all ten priority levels

## Every run

${doc.samples}

Feature-cost rows (M msg/s):

${doc.featureSamples}
`
}

/** Writes {@link RESULTS_PATH}. */
export function writeResults(doc: ResultsDocument): string {
  writeFileSync(RESULTS_PATH, renderResults(doc))
  return RESULTS_PATH
}
