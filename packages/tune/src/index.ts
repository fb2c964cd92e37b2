/**
 * **@flowing/tune** — the worker-count tuner of Flowing, as a library and as the `flowing-tune` bin:
 * it sweeps worker counts on your own handlers (on fresh loops with your production loop options),
 * finds the knee of the throughput curve — the smallest count at the peak that meets a p99 target —
 * and explains the curve's shape (I/O-bound plateau, still scaling, CPU-bound, serialized,
 * contention).
 *
 * @example
 * ```ts
 * import { tune, type TunerModule } from '@flowing/tune'
 *
 * const handlers: TunerModule<{ fetch: { id: number } }> = {
 *   register(loop) { loop.on('fetch', async () => { await new Promise((r) => setTimeout(r, 5)) }) },
 *   sample: (i) => ({ type: 'fetch', payload: { id: i }, key: i % 100 }),
 * }
 * const run = await tune({ module: 'inline', workers: [1, 4, 16], durationMs: 1000 }, console.log, handlers)
 * console.log(run.report.knee.workers)
 * ```
 *
 * @packageDocumentation
 * @module @flowing/tune
 */
export { type Command, parseArgs, resolveTuneOptions, type TuneInput, type TuneOptions, USAGE } from './args.js'
export { type ChartSpec, renderAsciiChart, renderChart } from './chart.js'
export {
  ExitCode,
  fullCause,
  InvalidLoopOptionsError,
  ModuleLoadError,
  TuneError,
  type TuneErrorCode,
} from './errors.js'
export { ms, perSecond, seconds, workerCount } from './format.js'
export {
  classify,
  explain,
  findKnee,
  type Knee,
  noisyCounts,
  type Shape,
  SPREAD_LIMIT,
  type SweepPoint,
  withdrawWhileScaling,
} from './knee.js'
export {
  checkLoopOptions,
  OWNED_LOOP_OPTIONS,
  type OwnedOptions,
  type TrialInfo,
  trialInfo,
  trialLoopOptions,
} from './loop-options.js'
export { describeMachine, formatMachineInfo, type MachineInfo } from './machine.js'
export { loadModule, type SampleMessage, type TunerModule, validateShape } from './module.js'
export { bar, createProgress, type Progress, type ProgressStream, silentProgress } from './progress.js'
export { buildReport, type Report, writeReport } from './report.js'
export { type TuneRun, tune } from './run.js'
export { median, spread } from './stats.js'
export { type MeasuredPoint, sweep } from './sweep.js'
export { type Align, type Column, renderTable } from './table.js'
export { judgeThreads, onThreadPool, type ThreadsRun, type ThreadsVerdict } from './threads.js'
export { runTrial, type TrialLoad, type TrialResult } from './trial.js'
