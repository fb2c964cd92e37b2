/**
 * One measured trial: a fresh loop with `workers` workers, the user's handlers, and offered load for a
 * fixed time — open loop (a fixed rate, whether or not the loop keeps up) or closed loop (a fixed number
 * of messages in flight, each completion admits the next). Returns what the window measured.
 *
 * @module
 */
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
import { createLoop, Histogram, type Loop, type LoopOptions } from '@flowing/core'
import { oneLine, TuneError } from './errors.js'
import { seconds, workerCount } from './format.js'
import { trialInfo, trialLoopOptions } from './loop-options.js'
import { checkedSample, type TrialInfo, type TunerModule } from './module.js'

/**
 * How a trial offers load.
 *
 * @group Tuning
 */
export interface TrialLoad {
  readonly workers: number
  /** With `--threads`: the thread count the default pool was sized to. */
  readonly threads?: number | undefined
  readonly durationMs: number
  /** Messages per second (open loop), or `undefined` for closed loop with 2 × workers in flight. */
  readonly rate: number | undefined
  readonly capacity: number
  /** Receives each line the trial loop logs (new failure signatures) instead of the console. */
  readonly log?: (line: string) => void
  /** A warm-up: finishing nothing within it is not yet a sign of a hang. */
  readonly warmup?: boolean
}

/**
 * What one trial measured, over its window only. Times in ms.
 *
 * @group Tuning
 */
export interface TrialResult {
  /** Successful completions per second. */
  readonly throughput: number
  readonly succeeded: number
  readonly failed: number
  /** Open loop: posts the full queue refused. */
  readonly refused: number
  /** Admission → handler start (`loop.metrics().queueWait`). */
  readonly queueWaitP50: number
  readonly queueWaitP99: number
  /** Post → handler settled: what a caller waits. */
  readonly lifecycleP50: number
  readonly lifecycleP99: number
  /** Handler run time (`loop.metrics().handlerTime`). */
  readonly handlerP50: number
  /** p99 of the event loop's scheduling delay (perf_hooks `monitorEventLoopDelay`); NaN when one turn blocked the whole window. */
  readonly eventLoopDelayP99: number
  /** Share of the window the event loop was busy, 0–1 (`performance.eventLoopUtilization`). */
  readonly utilization: number
}

// Handlers that outlive the window get this long to finish before the trial is declared stuck.
const SETTLE_MS = 15_000

/** What a trial counts while its window is open. */
interface TrialState {
  measuring: boolean
  inFlight: number
  // The ids of the samples offered and not yet finished: a handler's follow-ups are not samples.
  readonly samples: Set<string>
  next: number
  succeeded: number
  failed: number
  refused: number
  fault: TuneError | undefined
  firstFailure: unknown
}

/**
 * Runs one trial. @throws TuneError when the handlers cannot be measured (all fail, none finish, bad samples)
 *
 * @group Tuning
 */
export async function runTrial(mod: TunerModule, load: TrialLoad): Promise<TrialResult> {
  const state = newState()
  const trial = trialInfo(load)
  const loop = createLoop<Record<string, unknown>>({ ...trialOptions(mod, load, state), autoStart: false })
  const lifecycle = new Histogram()
  const closed = load.rate === undefined
  const target = 2 * load.workers
  const offer = offerer(mod, loop, state)
  instrument(loop, state, lifecycle, () => {
    if (closed) offer(target - state.inFlight)
  })
  await register(mod, loop, trial)
  loop.start()

  const delay = monitorEventLoopDelay({ resolution: 5 })
  delay.enable()
  const elu0 = performance.eventLoopUtilization()
  const t0 = performance.now()
  const faulted = (): boolean => state.fault !== undefined
  if (closed) offer(target)
  else await openLoop(load, t0, offer, faulted)
  if (closed) await sleepUntil(t0 + load.durationMs, faulted)
  state.measuring = false
  const elapsed = performance.now() - t0
  const metrics = loop.metrics()
  const utilization = performance.eventLoopUtilization(elu0).utilization
  delay.disable()
  judge(state, load)
  // Only now: a failed trial ends the run, so it need not wait for its stragglers.
  await settle(loop, load.workers)
  return {
    throughput: (state.succeeded / elapsed) * 1000,
    succeeded: state.succeeded,
    failed: state.failed,
    refused: state.refused,
    queueWaitP50: metrics.queueWait.p50,
    queueWaitP99: metrics.queueWait.p99,
    lifecycleP50: lifecycle.quantile(0.5),
    lifecycleP99: lifecycle.quantile(0.99),
    handlerP50: metrics.handlerTime.p50,
    // No sample at all means one turn blocked the whole window: there is no figure to give.
    eventLoopDelayP99: delay.count > 0 ? delay.percentile(99) / 1e6 : Number.NaN,
    utilization,
  }
}

function trialOptions(mod: TunerModule, load: TrialLoad, state: TrialState): LoopOptions {
  const owned = { workers: load.workers, capacity: load.capacity, logger: windowLogger(state, load) }
  return trialLoopOptions(mod, owned, trialInfo(load))
}

// What the loop logs after the window (the trial's own stop aborting its handlers) is not the handlers'.
function windowLogger(state: TrialState, load: TrialLoad): { warn(line: string): void } {
  return { warn: (line) => state.measuring && load.log?.(line) }
}

function newState(): TrialState {
  return {
    measuring: true,
    inFlight: 0,
    samples: new Set(),
    next: 0,
    succeeded: 0,
    failed: 0,
    refused: 0,
    fault: undefined,
    firstFailure: undefined,
  }
}

/** Posts `count` samples (stopping at the first fault, which it records). */
function offerer(mod: TunerModule, loop: Loop<Record<string, unknown>>, state: TrialState): (count: number) => void {
  const offer = (): void => {
    const i = state.next++
    const message = checkedSample(mod, i)
    const result = loop.tryPost(message.type, message.payload, { key: message.key, priority: message.priority })
    if (result.ok) {
      state.inFlight++
      state.samples.add(result.message.id)
    } else state.refused++
  }
  return (count) => {
    try {
      for (let k = 0; k < count && state.fault === undefined; k++) offer()
    } catch (error) {
      state.fault =
        error instanceof TuneError
          ? error
          : new TuneError('ERR_FLOWING_TUNE_SAMPLE', `sample(${state.next - 1}) was refused: ${oneLine(error)}`)
    }
  }
}

/**
 * Counts each message's final outcome (a retried message once, when it succeeds or is dead-lettered)
 * and its lifecycle; `settled` runs after each one in the window.
 */
function instrument(
  loop: Loop<Record<string, unknown>>,
  state: TrialState,
  lifecycle: Histogram,
  settled: () => void,
): void {
  const finish = (message: { readonly id: string; readonly postedAt: number }, ok: boolean | undefined): void => {
    if (!state.samples.delete(message.id)) return // a follow-up a handler posted
    state.inFlight--
    if (!state.measuring) return
    if (ok === true) state.succeeded++
    else if (ok === false) state.failed++
    lifecycle.record(performance.now() - message.postedAt)
    settled()
  }
  loop.events.on('failed', (_message, error) => {
    state.firstFailure ??= error
  })
  loop.events.on('succeeded', (message) => finish(message, true))
  loop.events.on('dead-lettered', (message) => finish(message, false))
  // Dropped (a duplicate, a drop-* policy) or cancelled: neither outcome, but no longer in flight.
  loop.events.on('dropped', (message) => finish(message, undefined))
  loop.events.on('cancelled', (message) => finish(message, undefined))
}

/** Ends the run when the window shows the handlers cannot be measured. */
function judge(state: TrialState, load: TrialLoad): void {
  if (state.fault !== undefined) throw state.fault
  const done = state.succeeded + state.failed
  if (done === 0 && load.warmup !== true) {
    throw new TuneError(
      'ERR_FLOWING_TUNE_HANDLERS',
      `no message finished within ${seconds(load.durationMs)} at ${workerCount(load.workers)}: a handler hangs or is slower than the trial (raise --duration)`,
    )
  }
  if (state.succeeded === 0 && done > 0) {
    throw new TuneError(
      'ERR_FLOWING_TUNE_HANDLERS',
      `every message failed (${done} of ${done}) at ${workerCount(load.workers)}; first error: ${oneLine(state.firstFailure)}`,
    )
  }
}

async function register(mod: TunerModule, loop: Loop<Record<string, unknown>>, trial: TrialInfo): Promise<void> {
  try {
    await mod.register(loop, trial)
  } catch (error) {
    throw new TuneError('ERR_FLOWING_TUNE_HANDLERS', `register(loop) threw: ${oneLine(error)}`, { cause: error })
  }
}

/** Posts at `rate`/s until the window ends: each tick posts what is due by now, so a slow tick catches up. */
async function openLoop(load: TrialLoad, t0: number, offer: (n: number) => void, stop: () => boolean): Promise<void> {
  const rate = load.rate as number
  let posted = 0
  for (;;) {
    const now = performance.now()
    if (now - t0 >= load.durationMs || stop()) return
    const due = Math.floor(((now - t0) / 1000) * rate)
    offer(due - posted)
    posted = due
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
}

async function sleepUntil(deadline: number, stop: () => boolean): Promise<void> {
  while (performance.now() < deadline && !stop()) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(50, Math.max(1, deadline - performance.now()))))
  }
}

/** Cancels what is still queued and waits for running handlers, so trials never overlap. */
async function settle(loop: Loop<Record<string, unknown>>, workers: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const stuck = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new TuneError(
            'ERR_FLOWING_TUNE_HANDLERS',
            `handlers were still running ${SETTLE_MS / 1000} s after the trial at ${workerCount(workers)} ended (running: ${loop.metrics().gauges.running}); a handler never settles`,
          ),
        ),
      SETTLE_MS,
    )
  })
  try {
    await Promise.race([loop.stop({ drain: false }), stuck])
  } finally {
    clearTimeout(timer)
  }
}
