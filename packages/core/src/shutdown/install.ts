/**
 * Process signal handling for apps: SIGTERM (Kubernetes, systemd, Docker) or SIGINT (Ctrl-C) stops the
 * loop with a deadline and hands the snapshot of what is left to you; a second signal cuts the drain
 * short at once.
 *
 * @module
 */

import { constants } from 'node:os'
import type { AbortSignalLike } from '@flowing/watchdog'
import type { LoopSnapshot } from '../contracts/snapshot.js'
import { InvalidArgumentError } from '../errors.js'
import * as check from '../internal/validate.js'

/**
 * A process signal name: the same union as `NodeJS.Signals` of `@types/node`, spelled out so that these
 * declarations compile without `@types/node`.
 *
 * @group Shutdown
 */
export type ProcessSignal =
  | 'SIGABRT'
  | 'SIGALRM'
  | 'SIGBUS'
  | 'SIGCHLD'
  | 'SIGCONT'
  | 'SIGFPE'
  | 'SIGHUP'
  | 'SIGILL'
  | 'SIGINT'
  | 'SIGIO'
  | 'SIGIOT'
  | 'SIGKILL'
  | 'SIGPIPE'
  | 'SIGPOLL'
  | 'SIGPROF'
  | 'SIGPWR'
  | 'SIGQUIT'
  | 'SIGSEGV'
  | 'SIGSTKFLT'
  | 'SIGSTOP'
  | 'SIGSYS'
  | 'SIGTERM'
  | 'SIGTRAP'
  | 'SIGTSTP'
  | 'SIGTTIN'
  | 'SIGTTOU'
  | 'SIGUNUSED'
  | 'SIGURG'
  | 'SIGUSR1'
  | 'SIGUSR2'
  | 'SIGVTALRM'
  | 'SIGWINCH'
  | 'SIGXCPU'
  | 'SIGXFSZ'
  | 'SIGBREAK'
  | 'SIGLOST'
  | 'SIGINFO'

/**
 * The part of a loop the handlers drive.
 *
 * @group Shutdown
 */
export interface Stoppable {
  /** `loop.stop()`. */
  stop(options: { deadlineMs: number; signal: AbortSignalLike }): Promise<LoopSnapshot>
}

/**
 * The part of `process` the handlers use (injectable for tests).
 *
 * @group Shutdown
 */
export interface SignalSource {
  /** Adds a signal listener. */
  on(signal: ProcessSignal, listener: (signal: ProcessSignal) => void): unknown
  /** Removes it. */
  removeListener(signal: ProcessSignal, listener: (signal: ProcessSignal) => void): unknown
  /** Ends the process. */
  exit(code?: number): unknown
}

/**
 * Options of {@link installShutdownHandlers}.
 *
 * @group Shutdown
 */
export interface ShutdownHandlerOptions {
  /**
   * The signals that stop the loops.
   * @defaultValue ['SIGTERM', 'SIGINT']
   */
  readonly signals?: readonly ProcessSignal[]
  /**
   * How long the loops may drain before what still runs is aborted and handed back (ms). Keep it below
   * your platform's grace period (Kubernetes: `terminationGracePeriodSeconds`, 30 s by default) minus
   * the time `onSnapshot` and the `close` hooks need.
   * @defaultValue 20_000
   */
  readonly deadlineMs?: number
  /**
   * Run in order, each awaited, before the loops stop — e.g. stop an HTTP server accepting requests,
   * so nothing posts into a stopping loop.
   */
  readonly beforeStop?: readonly (() => unknown)[]
  /**
   * Receives each loop's snapshot of unfinished messages (write it somewhere durable); awaited before
   * the `close` hooks run. `index` is the loop's position in the list given.
   */
  readonly onSnapshot?: (snapshot: LoopSnapshot, signal: ProcessSignal, index: number) => unknown
  /**
   * Run in order, each awaited, once every loop stopped and its snapshot was handled — e.g. close a
   * database pool the handlers used.
   */
  readonly close?: readonly (() => unknown)[]
  /**
   * Exit the process once everything is done: with `exitCode` when every step succeeded, with 1 when
   * any stop, snapshot or hook failed. With several installations on one process, the process exits
   * once all of them are done, with the worst code. `false` leaves exiting to you (the handlers are
   * removed either way).
   * @defaultValue true
   */
  readonly exit?: boolean
  /**
   * The exit code after a clean shutdown.
   * @defaultValue 0
   */
  readonly exitCode?: number
  /** Where signals come from and how to exit. @defaultValue `process` */
  readonly process?: SignalSource
}

const KNOWN = ['signals', 'deadlineMs', 'beforeStop', 'onSnapshot', 'close', 'exit', 'exitCode', 'process'] as const

/**
 * Installs signal handlers that stop `loops` gracefully: the `beforeStop` hooks run, admission stops
 * at once on every loop, each drains by priority for up to `deadlineMs`, what still runs is aborted,
 * and `onSnapshot` receives everything unfinished per loop (restore it with `loop.restore()` in the
 * next process); then the `close` hooks run and the process exits — 0 only if every step succeeded. A
 * second signal cuts every drain short at once. The handlers remove themselves when done.
 *
 * @param loops - a loop, or several (all stopped together, in parallel)
 * @returns a function that removes the handlers (if no signal came)
 * @throws InvalidArgumentError for a bad option
 *
 * @example
 * ```ts no-run
 * installShutdownHandlers([orders, emails], {
 *   deadlineMs: 20_000,
 *   beforeStop: [() => new Promise((done) => server.close(done))],
 *   onSnapshot: (snapshot, _signal, i) => writeFile(`/var/lib/app/loop-${i}.json`, JSON.stringify(snapshot)),
 *   close: [() => pool.end()],
 * })
 * ```
 *
 * @group Shutdown
 */
export function installShutdownHandlers(
  loops: Stoppable | readonly Stoppable[],
  options: ShutdownHandlerOptions = {},
): () => void {
  const targets = checkLoops(loops)
  const o = readOptions(options)
  const proc: SignalSource = o.process ?? process
  const force = new AbortController()
  let stopping = false
  const uninstall = () => {
    for (const s of o.signals) proc.removeListener(s, onSignal)
  }
  function onSignal(signal: ProcessSignal): void {
    if (stopping) {
      force.abort() // the second signal: hand back what is left now
      return
    }
    stopping = true
    const work = shutDown(targets, o, signal, force.signal).finally(uninstall)
    void exitWhenAllDone(proc, work, o.exit)
  }
  for (const s of o.signals) proc.on(s, onSignal)
  return uninstall
}

type Resolved = Required<Omit<ShutdownHandlerOptions, 'onSnapshot' | 'process'>> & {
  readonly onSnapshot: ShutdownHandlerOptions['onSnapshot'] | undefined
  readonly process: SignalSource | undefined
}

// Validated and used from one read of each option: a getter cannot answer differently later.
function readOptions(options: ShutdownHandlerOptions): Resolved {
  const raw = check.snapshotOptions('options', options)
  check.checkKnownKeys('options', raw, KNOWN)
  const o = raw as ShutdownHandlerOptions
  if (o.onSnapshot !== undefined) check.fn('options.onSnapshot', o.onSnapshot)
  const resolved: Resolved = {
    signals: checkSignals(o.signals ?? ['SIGTERM', 'SIGINT']),
    deadlineMs: check.nonNegativeNumber('options.deadlineMs', o.deadlineMs ?? 20_000, true),
    beforeStop: checkHooks('options.beforeStop', o.beforeStop),
    close: checkHooks('options.close', o.close),
    exit: o.exit === undefined ? true : check.boolean('options.exit', o.exit),
    exitCode: o.exitCode === undefined ? 0 : check.nonNegativeInteger('options.exitCode', o.exitCode),
    onSnapshot: o.onSnapshot,
    process: o.process,
  }
  return resolved
}

// The whole shutdown of one installation; resolves with its exit code (never rejects).
async function shutDown(
  loops: readonly Stoppable[],
  o: Resolved,
  signal: ProcessSignal,
  force: AbortSignalLike,
): Promise<number> {
  let failed = !(await runHooks('beforeStop', o.beforeStop))
  const stops = loops.map(async (loop, i) => {
    try {
      const snapshot = await loop.stop({ deadlineMs: o.deadlineMs, signal: force })
      await o.onSnapshot?.(snapshot, signal, i)
    } catch (error) {
      console.error(`[flowing] shutdown of loop ${i} failed:`, error)
      failed = true
    }
  })
  await Promise.all(stops)
  if (!(await runHooks('close', o.close))) failed = true
  return failed ? 1 : o.exitCode
}

// Runs hooks in order, each awaited; a failing one is reported and the next still runs.
async function runHooks(name: string, hooks: readonly (() => unknown)[]): Promise<boolean> {
  let ok = true
  for (const [i, hook] of hooks.entries()) {
    try {
      await hook()
    } catch (error) {
      console.error(`[flowing] shutdown hook ${name}[${i}] failed:`, error)
      ok = false
    }
  }
  return ok
}

// Installations per process whose shutdown is under way, and whether the exit was called.
const underWay = new WeakMap<SignalSource, { work: Set<Promise<number>>; exited: boolean }>()

// Exits once every installation of this process that got the signal is done, with the worst code:
// the first loop to finish must not end the process under another loop's drain.
async function exitWhenAllDone(proc: SignalSource, work: Promise<number>, exit: boolean): Promise<void> {
  let shared = underWay.get(proc)
  if (shared === undefined) {
    shared = { work: new Set(), exited: false }
    underWay.set(proc, shared)
  }
  shared.work.add(work)
  await work
  for (;;) {
    const all = [...shared.work]
    const codes = await Promise.all(all)
    if (all.length !== shared.work.size) continue // another installation started meanwhile
    if (!exit || shared.exited) return
    shared.exited = true
    underWay.delete(proc)
    proc.exit(Math.max(...codes))
    return
  }
}

function checkLoops(loops: unknown): readonly Stoppable[] {
  const list = Array.isArray(loops) ? (loops as unknown[]) : [loops]
  if (list.length === 0) throw new InvalidArgumentError('loops', 'a loop or a non-empty array of loops', loops)
  list.forEach((loop, i) => {
    const stop = typeof loop === 'object' && loop !== null ? (loop as { stop?: unknown }).stop : undefined
    if (typeof stop !== 'function') {
      throw new InvalidArgumentError(Array.isArray(loops) ? `loops[${i}]` : 'loop', 'a loop (with stop())', loop)
    }
  })
  return list as Stoppable[]
}

function checkHooks(name: string, hooks: unknown): readonly (() => unknown)[] {
  if (hooks === undefined) return []
  if (!Array.isArray(hooks)) throw new InvalidArgumentError(name, 'an array of functions', hooks)
  for (const [i, hook] of (hooks as unknown[]).entries()) check.fn(`${name}[${i}]`, hook)
  return hooks as (() => unknown)[]
}

// The signal names this Node.js knows (SIGTERM, SIGINT, SIGHUP …): `process.on('SIGBOGUS')` would
// silently register a listener that never fires.
const SIGNALS: readonly string[] = Object.keys(constants.signals)

function checkSignals(given: unknown): readonly ProcessSignal[] {
  if (!Array.isArray(given) || given.length === 0) {
    throw new InvalidArgumentError('options.signals', 'a non-empty array of signal names', given)
  }
  const rule = 'a signal name of os.constants.signals (e.g. SIGTERM, SIGINT, SIGHUP)'
  for (const [i, signal] of (given as unknown[]).entries()) {
    check.oneOf(`options.signals[${i}]`, signal, SIGNALS, { rule, suggest: true })
  }
  return given as readonly ProcessSignal[]
}
