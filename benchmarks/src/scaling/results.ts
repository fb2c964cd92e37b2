/**
 * `benchmarks/RESULTS-scaling.md` and `benchmarks/charts/scaling-<dimension>.svg`: the tables, the
 * verdicts and the charts of one full scaling run, plus what is needed to judge them.
 *
 * @module
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { formatMachine, type Machine } from '../lib/machine.js'
import { type Dimension, dimensionChart, dimensionTable, VERDICT_RULE, verdictLines } from './report.js'

/** Where the results go: `benchmarks/RESULTS-scaling.md`. */
export const SCALING_RESULTS_PATH = fileURLToPath(new URL('../../RESULTS-scaling.md', import.meta.url))
/** Where the charts go: `benchmarks/charts/`. */
export const CHARTS_DIR = fileURLToPath(new URL('../../charts/', import.meta.url))

/** One section of the document: a dimension and the prose that explains its workload. */
export interface Section {
  readonly dimension: Dimension
  readonly about: string
}

/** Everything one run puts in the document. */
export interface ScalingResultsDocument {
  readonly command: string
  readonly machine: Machine
  readonly revision: string
  readonly date: Date
  readonly workload: string
  readonly sections: readonly Section[]
  readonly checks: readonly string[]
  readonly seconds: number
  /** 1-minute load average when the run ended (the machine line has it at the start). */
  readonly loadAtEnd: number
}

function renderSection({ dimension, about }: Section): string {
  return `## ${dimension.title}

${about}

${dimensionTable(dimension)}

${verdictLines(dimension)}

![${dimension.title}: ns per operation against ${dimension.sizeLabel}](./charts/scaling-${dimension.id}.svg)
`
}

/** Renders the document. */
export function renderScalingResults(doc: ScalingResultsDocument): string {
  return `# Benchmark results — \`scaling\`

Generated file: do not edit by hand; re-run the command below to refresh it. How to read it:
[README.md](./README.md#what-scaling-measures). Figures drift 10–30 % run to run — read the
**ratios** to the smallest size within this file, never absolute figures across machines or runs.
The core suite's results are in [RESULTS.md](./RESULTS.md).

- **Command:** ${doc.command}
- **Code:** commit ${doc.revision}
- **Machine:** ${formatMachine(doc.machine)}, ${doc.loadAtEnd.toFixed(2)} at the end${doc.loadAtEnd > 1.5 || doc.machine.loadAverage > 1.5 ? ' (other work shared the cores during the run)' : ''}
- **Date:** ${doc.date.toISOString()} (whole run: ${doc.seconds.toFixed(0)} s)
- **Workload:** ${doc.workload}

Every figure is the median of the runs, in ns per operation; "× smallest" divides it by the same
quantity's median at the smallest size. Verdict rule: ${VERDICT_RULE}.

${doc.sections.map(renderSection).join('\n')}
## Self-checks that passed

${doc.checks.map((line) => `- ${line}`).join('\n')}
`
}

/**
 * Writes {@link SCALING_RESULTS_PATH} and one chart per section into {@link CHARTS_DIR}.
 * @returns the paths written
 */
export function writeScalingResults(doc: ScalingResultsDocument): string[] {
  mkdirSync(CHARTS_DIR, { recursive: true })
  const paths = doc.sections.map(({ dimension }) => {
    const path = `${CHARTS_DIR}scaling-${dimension.id}.svg`
    writeFileSync(path, dimensionChart(dimension))
    return path
  })
  writeFileSync(SCALING_RESULTS_PATH, renderScalingResults(doc))
  return [SCALING_RESULTS_PATH, ...paths]
}
