/**
 * Process signal handling for apps: SIGTERM (Kubernetes, systemd, Docker) or SIGINT (Ctrl-C) stops the
 * loop with a deadline and hands the snapshot of what is left to you; a second signal cuts the drain
 * short at once.
 *
 * @module
 */
import { constants } from 'node:os'
import { InvalidArgumentError } from '../errors.js'
import * as check from '../internal/validate.js'
import type { LoopSnapshot } from './snapshot.js'

/** The part of a loop the handlers drive. */
export interface Stoppable {
  /** `loop.stop()`. */
  stop(options: { deadlineMs: number; signal: AbortSignal }): Promise<LoopSnapshot>
}

/** The part of `process` the handlers use (injectable for tests). */
export interface SignalSource {
  /** Adds a signal listener. */
  on(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown
  /** Removes it. */
  removeListener(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown
  /** Ends the process. */
  exit(code?: number): unknown
}

/** Options of {@link installShutdownHandlers}. */
export interface ShutdownHandlerOptions {
  /**
   * The signals that stop the loop.
   * @defaultValue ['SIGTERM', 'SIGINT']
   */
  readonly signals?: readonly NodeJS.Signals[]
  /**
   * How long the loop may drain before what still runs is aborted and handed back (ms). Keep it below
   * your platform's grace period (Kubernetes: `terminationGracePeriodSeconds`, 30 s by default) minus
   * the time `onSnapshot` needs.
   * @defaultValue 20_000
   */
  readonly deadlineMs?: number
  /** Receives the snapshot of unfinished messages (write it somewhere durable); awaited before exiting. */
  readonly onSnapshot?: (snapshot: LoopSnapshot, signal: NodeJS.Signals) => unknown
  /**
   * Exit the process once the snapshot is handled (code `exitCode`; 1 if `onSnapshot` failed). `false`
   * leaves that to you (the handlers are removed either way).
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

/**
 * Installs signal handlers that stop `loop` gracefully: admission stops at once, the loop drains by
 * priority for up to `deadlineMs`, what still runs is aborted, and `onSnapshot` receives everything
 * unfinished (restore it with `loop.restore()` in the next process). A second signal stops at once.
 * The handlers remove themselves when done.
 *
 * @returns a function that removes the handlers (if no signal came)
 * @throws InvalidArgumentError for a bad option
 *
 * @example
 * ```ts no-run
 * installShutdownHandlers(loop, {
 *   deadlineMs: 20_000,
 *   onSnapshot: (snapshot) => writeFile('/var/lib/app/loop.snapshot.json', JSON.stringify(snapshot)),
 * })
 * ```
 */
export function installShutdownHandlers(loop: Stoppable, options: ShutdownHandlerOptions = {}): () => void {
  // Validated and used from one read of each option: a getter cannot answer differently later.
  const raw = check.snapshotOptions('options', options)
  check.checkKnownKeys('options', raw, ['signals', 'deadlineMs', 'onSnapshot', 'exit', 'exitCode', 'process'])
  const o = raw as ShutdownHandlerOptions
  const signals = checkSignals(o.signals ?? ['SIGTERM', 'SIGINT'])
  const deadlineMs = check.nonNegativeNumber('options.deadlineMs', o.deadlineMs ?? 20_000, true)
  const onSnapshot = o.onSnapshot
  if (onSnapshot !== undefined) check.fn('options.onSnapshot', onSnapshot)
  const exit = o.exit === undefined ? true : check.boolean('options.exit', o.exit)
  const exitCode = o.exitCode === undefined ? 0 : check.nonNegativeInteger('options.exitCode', o.exitCode)
  const proc: SignalSource = o.process ?? process
  const force = new AbortController()
  let stopping = false

  const uninstall = () => {
    for (const s of signals) proc.removeListener(s, onSignal)
  }
  const finish = async (signal: NodeJS.Signals) => {
    let code = exitCode
    try {
      const snapshot = await loop.stop({ deadlineMs, signal: force.signal })
      await onSnapshot?.(snapshot, signal)
    } catch (error) {
      console.error('[flowing] shutdown failed:', error)
      code = 1
    } finally {
      uninstall()
    }
    if (exit) proc.exit(code)
  }
  function onSignal(signal: NodeJS.Signals): void {
    if (stopping) {
      force.abort() // the second signal: hand back what is left now
      return
    }
    stopping = true
    void finish(signal)
  }
  for (const s of signals) proc.on(s, onSignal)
  return uninstall
}

// The signal names this Node.js knows (SIGTERM, SIGINT, SIGHUP …): `process.on('SIGBOGUS')` would
// silently register a listener that never fires.
const SIGNALS: readonly string[] = Object.keys(constants.signals)

function checkSignals(given: unknown): readonly NodeJS.Signals[] {
  if (!Array.isArray(given) || given.length === 0) {
    throw new InvalidArgumentError('options.signals', 'a non-empty array of signal names', given)
  }
  given.forEach((signal: unknown, i) => {
    if (typeof signal === 'string' && SIGNALS.includes(signal)) return
    const near = typeof signal === 'string' ? check.closest(signal, SIGNALS) : undefined
    throw new InvalidArgumentError(
      `options.signals[${i}]`,
      'a signal name of os.constants.signals (e.g. SIGTERM, SIGINT, SIGHUP)',
      signal,
      near === undefined ? undefined : { hint: `did you mean \`${near}\`?` },
    )
  })
  return given as readonly NodeJS.Signals[]
}
