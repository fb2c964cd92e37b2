/**
 * What happens after an attempt fails: classify the error, then either schedule a retry on the timing
 * wheel (the worker slot is free at once; an ordered retry keeps its key claimed so per-key order holds)
 * or dead-letter the message, alerting at most once per window. Also the per-route circuit breakers
 * and the message traces, which every transition feeds.
 *
 * ```
 *  running ─▶ failed ─┬─ attempts left ─▶ retry-scheduled ─(back-off on the wheel)─▶ queued ─▶ running …
 *                     └─ non-retryable, or none left ─▶ dead-lettered ─▶ store, sink, alert window
 *                                                     └─ (a request's) request-failed ─▶ the caller's promise
 * ```
 *
 * @module
 */
import { HandlerTimeoutError } from '@flowing/watchdog'
import type { CircuitPolicy, DeadLetter, ErrorInfo, RetryScheduled } from '../contracts/failures.js'
import type { Message, MessageMap } from '../contracts/message.js'
import type { FailureExitOptions } from '../contracts/options.js'
import { describeValue, type RetryAfterScope } from '../errors.js'
import { type Envelope, Where } from '../internal/envelope.js'
import { postClockOf } from '../internal/post-clock.js'
import { WallTimes } from '../internal/wall-times.js'
import type { QueueHold } from '../shutdown/holders.js'
import { type Alerts, newAlerts } from './alerts.js'
import { BreakerHold } from './breaker-hold.js'
import type { Circuits } from './circuits.js'
import { classify, errorInfo } from './classify.js'
import { deadLetterOf } from './dead-letter-of.js'
import type { DeadLetterStore } from './dead-letters.js'
import type { FailureParts } from './failure-ports.js'
import { Retries } from './retries.js'
import { attemptsAllowed, backoff, guardRandom, mergeRetry, type RetryPolicy } from './retry-policy.js'
import { SlidingWindow } from './sliding-window.js'
import type { Traces } from './trace.js'
import type { Trace } from './trace-record.js'

/** Retries, dead letters, alerts, breakers and traces: the loop's failure handling. */
export class Failures<M extends MessageMap> {
  /** Per-message traces (the loop's, shared with the outcomes). */
  readonly traces: Traces
  /** Messages backing off before a retry (on the shared wheel), and due ones waiting for room. */
  readonly retries: Retries
  /** The per-route breakers and the paused types, and their hold on the messages they keep (places and keys). */
  readonly holds: BreakerHold<M>
  readonly circuits: Circuits
  readonly breakerHold: QueueHold
  /** The in-memory dead-letter store. */
  readonly deadLetters: DeadLetterStore
  readonly #h: FailureParts<M>
  readonly #wall: WallTimes
  readonly #alerts: Alerts
  // Attempts' outcomes for the failure exit (when configured), and whether it fired.
  readonly #exitWindow: SlidingWindow | undefined
  #exited = false
  // The `random` option, guarded: a bad draw falls back to Math.random (and is reported once).
  readonly #random: () => number

  /**
   * @param host - the stages failure handling touches
   * @param compare - the queue's urgency order
   */
  constructor(host: FailureParts<M>, compare: (a: Envelope, b: Envelope) => number) {
    this.#h = host
    this.#wall = new WallTimes(host.clock)
    const o = host.policy.options
    this.#random = guardRandom(o.random, (value) => {
      if (o.logger !== false)
        o.logger.warn(`[flowing] the \`random\` option gave ${describeValue(value)}; using Math.random`)
    })
    this.traces = host.records.traces
    this.deadLetters = host.exits.deadLetters
    const entries = postClockOf(host.clock) // an unordered retry re-enters stamped as posts are
    this.retries = new Retries(host.holds.wheel, host.holds.queue, {
      ordered: (m) => this.ordered(m),
      requeued: (m, now) => {
        this.traces.note(m, 'queued', now, this.attemptOf(m))
        host.events.emit('requeued', m as unknown as Message<M>, this.attemptOf(m))
      },
      pump: host.holds.pump,
      now: () => entries.now(),
    })
    this.holds = new BreakerHold(host, compare, (type) => this.#circuitPolicy(type))
    this.circuits = this.holds.circuits
    this.breakerHold = this.holds.queueHold
    if (o.circuitBreaker !== false) this.#enableBreakers()
    this.#exitWindow = o.failureExit === false ? undefined : new SlidingWindow(o.failureExit.windowMs ?? 10_000)
    this.#alerts = newAlerts(o.alerts, host.clock, host.metrics, host.events)
  }

  /** The attempt number `m` runs next (1 unless it failed before). */
  attemptOf(m: Envelope): number {
    const t = this.traces.of(m)
    return t === undefined ? 1 : t.attemptCount + 1
  }

  /** A deadline shorter than the handler's when `m` runs as a breaker probe. */
  probeTimeout(m: Envelope): number | undefined {
    return this.circuits.probeTimeout(m)
  }

  /** A type was registered: breakers start watching if it has one (the queue consults them at starts). */
  registered(type: string): void {
    if (this.#h.policy.registry.breakerFor(type) !== undefined) this.#enableBreakers()
  }

  #enableBreakers(): void {
    this.circuits.enable()
    this.holds.filterStarts()
  }

  /** An attempt of `m` started. */
  started(m: Envelope, attempt: number, now: number): void {
    this.traces.note(m, 'running', now, attempt)
  }

  /** An attempt succeeded (the outcome was counted by the loop). */
  succeeded(m: Envelope, attempt: number, startedAt: number, now: number): void {
    this.circuits.record(m, false, now) // may emit `circuit`
    this.#exitWindow?.record(now, false)
    const t = this.traces.of(m) ?? (this.traces.all ? this.traces.open(m) : undefined)
    if (t === undefined) return
    t.succeeded(attempt, startedAt, this.#wall.epochMsOf(startedAt, now), now - startedAt)
    this.traces.note(m, 'succeeded', now, attempt)
  }

  /**
   * An attempt failed: retry it or dead-letter it. Frees the key unless an ordered retry keeps it.
   * The message is put where it goes (the retry store, the dead-letter store) before any listener runs,
   * so a listener that stops the loop finds it there.
   */
  failed(m: Envelope, attempt: number, startedAt: number, error: unknown, now: number): void {
    const retryAfter = retryAfterOf(error)
    if (retryAfter !== undefined && !this.#h.exits.lifecycle.cut) {
      this.#rateLimited(m, attempt, startedAt, retryAfter, now)
      return
    }
    const { events, exits } = this.#h
    const message = m as unknown as Message<M>
    const info = errorInfo(error, classify(this.#h.policy.options.classify, error, m as unknown as Message<MessageMap>))
    const t = this.#noteFailure(m, attempt, startedAt, info, error instanceof HandlerTimeoutError, now)
    const policy = this.#policyOf(m)
    const retry = attempt < attemptsAllowed(policy, info.errorClass)
    if (retry && exits.lifecycle.cut) {
      // The stop's cut-off came while the classifier or a listener ran: handed back, to retry elsewhere.
      exits.outcomes.snapshotted(m, 'queued', undefined, true)
      events.emit('failed', message, error, { attempt, error: info, next: 'retry' })
      return
    }
    const scheduled = retry && exits.lifecycle.mayRetry ? this.#scheduleRetry(m, t, policy, attempt, now) : undefined
    if (scheduled === undefined && exits.outcomes.requestTakes(m)) {
      this.#toCaller(m, attempt, error, info, t, now)
      return
    }
    const letter = scheduled === undefined ? this.#bury(m, info, t, now, error) : undefined
    this.circuits.record(m, info.errorClass !== 'non-retryable', now) // may emit `circuit`
    events.emit('failed', message, error, {
      attempt,
      error: info,
      next: scheduled === undefined ? 'dead-letter' : 'retry',
    })
    if (scheduled === undefined) this.#announce(m, letter as DeadLetter, t)
    // (unless a `failed` listener stopped the loop, which cancelled or handed back the retry)
    else if (m.where === Where.Backoff) events.emit('retrying', message, scheduled)
    this.#checkExit(now)
  }

  // The failed attempt in `m`'s trace (opened if it had none), and in the failure count.
  #noteFailure(
    m: Envelope,
    attempt: number,
    startedAt: number,
    info: ErrorInfo,
    timedOut: boolean,
    now: number,
  ): Trace {
    const t = this.traces.openAt(m, startedAt, attempt)
    const startedAtEpochMs = this.#wall.epochMsOf(startedAt, now)
    const outcome = timedOut ? 'timed-out' : 'failed'
    t.addAttempt({ attempt, startedAt, startedAtEpochMs, durationMs: now - startedAt, outcome, error: info })
    t.note(outcome, now, attempt, info.signature)
    this.#h.metrics.failed++
    return t
  }

  // A downstream said "too many requests": `m` waits for its scope's pause, no attempt consumed.
  #rateLimited(m: Envelope, attempt: number, startedAt: number, retryAfter: RetryAfter, now: number): void {
    const t = this.traces.openAt(m, startedAt, attempt)
    const scope = retryAfter.scope === 'route' ? '' : ` (${retryAfter.scope})`
    t.note('rate-limited', now, attempt, `retry after ${Math.round(retryAfter.ms)} ms${scope}`)
    this.#h.metrics.retryAfters++
    this.#h.holds.limits.backOff(m, retryAfter.ms, now, retryAfter.scope)
  }

  #scheduleRetry(m: Envelope, t: Trace, policy: RetryPolicy, attempt: number, now: number): RetryScheduled {
    const delayMs = backoff(policy, attempt, t.lastDelayMs || policy.baseMs, this.#random)
    t.lastDelayMs = delayMs
    const dueAt = now + delayMs
    this.#h.metrics.retried++
    this.retries.backOff(m, dueAt)
    t.note('retry-scheduled', now, attempt + 1, `${Math.round(delayMs)} ms`)
    return { attempt: attempt + 1, delayMs, dueAt }
  }

  /** Whether a retry of `m` keeps its key (keyed, ordered policy). */
  ordered(m: Envelope): boolean {
    return m.key !== undefined && this.#policyOf(m).order === 'ordered'
  }

  /** The loop stopped: alerts not sent yet go out now, timers are cleared. */
  flush(): void {
    this.#alerts.flush()
    this.circuits.stopTimers()
  }

  // The failure exit: once the rate of failed attempts in the window reaches the threshold, once.
  #checkExit(now: number): void {
    const window = this.#exitWindow
    if (window === undefined || this.#exited) return
    window.record(now, true)
    const exit = this.#h.policy.options.failureExit as FailureExitOptions
    const attempts = window.events(now)
    const failures = window.hits(now)
    if (attempts < (exit.minVolume ?? 20) || failures / attempts < exit.failureRate) return
    this.#exited = true
    this.#h.exits.failureExit({
      failureRate: failures / attempts,
      attempts,
      failures,
      windowMs: exit.windowMs ?? 10_000,
    })
  }

  // The outcome `request-failed`: the request's caller takes the error, as thrown. The route's breaker
  // and the failure exit still count it (the handler did fail); no letter, sink, alert or new-failure log.
  #toCaller(m: Envelope, attempt: number, error: unknown, info: ErrorInfo, t: Trace, now: number): void {
    const { events } = this.#h
    const outcomes = this.#h.exits.outcomes
    const reason = endReason(info)
    outcomes.requestFailed(m, reason, error, now)
    this.circuits.record(m, info.errorClass !== 'non-retryable', now) // may emit `circuit`
    events.emit('failed', m as unknown as Message<M>, error, { attempt, error: info, next: 'caller' })
    outcomes.failureAnnounced(m, 'request-failed', t, now, reason, info)
    this.#checkExit(now)
  }

  // The outcome `dead-lettered` (no user code runs): the letter as the outcomes record it.
  #bury(m: Envelope, error: ErrorInfo, t: Trace, now: number, thrown: unknown): DeadLetter {
    return this.#h.exits.outcomes.deadLettered(m, deadLetterOf(m, error, t.attempts, this.#h.clock, now), thrown)
  }

  // What a dead letter tells the outside: the sink, the first-seen signature, the alert window, the event.
  #announce(m: Envelope, letter: DeadLetter, t: Trace): void {
    const { events } = this.#h
    const options = this.#h.policy.options
    const error = letter.error
    this.#toSink(letter)
    if (this.#alerts.isNew(m.type, error.signature)) {
      const logger = options.logger
      if (logger !== false) logger.warn(`[flowing] new failure of ${m.type}: ${error.signature} (first: ${m.id})`)
      events.emit('signature', m.type, error, m as unknown as Message<M>)
    }
    this.#alerts.record(m.type, error.signature)
    events.emit('dead-lettered', m as unknown as Message<M>, letter)
    this.#h.exits.outcomes.deadLetterAnnounced(m, letter, t)
  }

  #toSink(letter: DeadLetter): void {
    const sink = this.#h.policy.options.deadLetters.sink
    if (sink === undefined) return
    const report = (error: unknown) => this.#h.events.emit('sink-error', error, letter)
    try {
      const result = sink.add(letter)
      if (result !== undefined && typeof result.then === 'function') result.then(undefined, report)
    } catch (error) {
      report(error)
    }
  }

  // The message's policy: its post's, over its type's, over the loop's (each checked when it was given).
  #policyOf(m: Envelope): RetryPolicy {
    return mergeRetry(
      'retry',
      this.#h.records.extras.retryOf(m),
      this.#h.policy.registry.retryFor(m.type),
      this.#h.policy.options.retry,
    )
  }

  #circuitPolicy(type: string): CircuitPolicy | false {
    return this.#h.policy.registry.breakerFor(type) ?? this.#h.policy.options.circuitBreaker
  }
}

// Why a message failed for good: its error is non-retryable, or its attempts are used up.
function endReason(info: ErrorInfo): 'non-retryable' | 'exhausted' {
  return info.errorClass === 'non-retryable' ? 'non-retryable' : 'exhausted'
}

interface RetryAfter {
  readonly ms: number
  readonly scope: RetryAfterScope
}

// The retry-after and scope of a `RateLimitError` of any installed copy (read by its code, not its
// class; a copy without `scope` holds its route back).
function retryAfterOf(error: unknown): RetryAfter | undefined {
  if (error === null || typeof error !== 'object') return undefined
  try {
    const e = error as { code?: unknown; retryAfterMs?: unknown; scope?: unknown }
    if (e.code !== 'ERR_FLOWING_RATE_LIMITED') return undefined
    const ms = e.retryAfterMs
    if (typeof ms !== 'number' || !(ms >= 0) || !Number.isFinite(ms)) return undefined
    const scope = e.scope === 'key' || e.scope === 'group' ? e.scope : 'route'
    return { ms, scope }
  } catch {
    return undefined // a throwing getter: an ordinary failure
  }
}
