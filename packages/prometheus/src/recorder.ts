/**
 * One loop's event listeners: each per-message event is a lookup in a small per-type cache of
 * cells (see cells.ts) and one increment or bucket scan — no label hashing, no allocation per message.
 *
 * @module
 */

import type {
  AttemptFailure,
  DeadLetter,
  DropReason,
  FinishedSummary,
  Loop,
  Message,
  MessageMap,
  RateLimitHold,
} from '@flowing/core'
import { errorCode } from '@flowing/errors'
import type { CounterCell, CounterCells, HistogramCell, HistogramCells } from './cells.js'
import type { EventMetrics } from './metric-set.js'

// The listeners' signatures, as `loop.events` calls them.
type Listener = (...args: never[]) => void
interface Emitter {
  on(event: string, fn: Listener): unknown
  off(event: string, fn: Listener): unknown
}

// One metric's cells of this loop by label values (`type`, or `type\0value`): created on first use.
class Children<C> {
  readonly #cells = new Map<string, C>()
  readonly #metric: CounterCells | HistogramCells
  readonly #base: Readonly<Record<string, string>>
  // Series ids in the metric: this loop's `loop` label, then the local id.
  readonly #prefix: string

  constructor(metric: CounterCells | HistogramCells, base: Readonly<Record<string, string>>) {
    this.#metric = metric
    this.#base = base
    this.#prefix = `${base['loop']}\0`
  }

  /** The cell for `type` (and a second label `name` = `value`). */
  get(type: string, name?: string, value?: string): C {
    const id = value === undefined ? type : `${type}\0${value}`
    let cell = this.#cells.get(id)
    if (cell === undefined) {
      const labels: Record<string, string> = { ...this.#base, type }
      if (name !== undefined && value !== undefined) labels[name] = value
      cell = this.#metric.cell(this.#prefix + id, labels) as C
      this.#cells.set(id, cell)
    }
    return cell
  }

  /** Removes every series this loop wrote. */
  remove(): void {
    for (const id of this.#cells.keys()) this.#metric.remove(this.#prefix + id)
    this.#cells.clear()
  }
}

/** The outcome label: `dead-lettered` → `dead_lettered` (Prometheus label values read best in snake case). */
function outcomeLabel(outcome: string): string {
  return outcome.replace('-', '_')
}

/** The `error_class` of a failed attempt: `timeout`, or the class core gave it. */
function errorClass(failure: AttemptFailure): string {
  return failure.error.code === 'ERR_HANDLER_TIMEOUT' ? 'timeout' : failure.error.errorClass.replace('-', '_')
}

/**
 * Listens to one loop and writes its series.
 *
 * @remarks Counters only ever go up between `attach()` and `detach()`; `detach()` removes the
 * listeners and every series the loop wrote (its labels are remembered per child).
 */
export class Recorder {
  readonly #events: Emitter
  readonly #listeners: [string, Listener][] = []
  readonly #all: Children<unknown>[] = []
  // Delayed messages seen by `scheduled`, so their later `posted` (when due) is not counted again.
  readonly #scheduled = new WeakSet<object>()

  constructor(loop: Loop<MessageMap>, metrics: EventMetrics, base: Readonly<Record<string, string>>) {
    this.#events = loop.events as unknown as Emitter
    const counter = (m: CounterCells) => this.#children<CounterCell>(m, base)
    const histogram = (m: HistogramCells) => this.#children<HistogramCell>(m, base)
    const posted = counter(metrics.posted)
    const accepted = counter(metrics.accepted)
    const rejected = counter(metrics.rejected)
    const processed = counter(metrics.processed)
    const finished = counter(metrics.finished)
    const failed = counter(metrics.failed)
    const retries = counter(metrics.retries)
    const deadLetters = counter(metrics.deadLetters)
    const rateLimited = counter(metrics.rateLimited)
    const queueWait = histogram(metrics.queueWait)
    const handler = histogram(metrics.handler)
    const lifecycle = histogram(metrics.lifecycle)
    const admit = (type: string): void => {
      posted.get(type).value++
      accepted.get(type).value++
    }
    this.#on('scheduled', (message: Message) => {
      this.#scheduled.add(message)
      admit(message.type)
    })
    this.#on('posted', (message: Message) => {
      if (!this.#scheduled.delete(message)) admit(message.type)
    })
    // `drop-new` admits and drops at once, with no `posted`: still an accepted message (core's count).
    this.#on('dropped', (message: Message, reason: DropReason) => {
      if (reason === 'drop-new') admit(message.type)
    })
    this.#on('rejected', (type: string, error: Error) => {
      posted.get(type).value++
      rejected.get(type, 'reason', errorCode(error) ?? 'unknown').value++
    })
    this.#on('succeeded', (message: Message, durationMs: number) => {
      processed.get(message.type).value++
      metrics.handler.observe(handler.get(message.type, 'result', 'succeeded'), durationMs / 1000)
    })
    this.#on('failed', (message: Message, _error: unknown, failure: AttemptFailure) => {
      failed.get(message.type, 'error_class', errorClass(failure)).value++
    })
    this.#on('retrying', (message: Message) => {
      retries.get(message.type).value++
    })
    this.#on('dead-lettered', (message: Message, _letter: DeadLetter) => {
      deadLetters.get(message.type).value++
    })
    this.#on('rate-limited', (message: Message, hold: RateLimitHold) => {
      rateLimited.get(message.type, 'scope', hold.scope).value++
    })
    this.#on('finished', (message: Message, summary: FinishedSummary) => {
      const outcome = outcomeLabel(summary.outcome)
      finished.get(message.type, 'outcome', outcome).value++
      metrics.lifecycle.observe(lifecycle.get(message.type, 'outcome', outcome), summary.lifecycleMs / 1000)
      if (summary.waitMs !== undefined) metrics.queueWait.observe(queueWait.get(message.type), summary.waitMs / 1000)
    })
  }

  /** Removes the listeners and every series this loop wrote. */
  detach(): void {
    for (const [event, fn] of this.#listeners) this.#events.off(event, fn)
    this.#listeners.length = 0
    for (const children of this.#all) children.remove()
  }

  #on(event: string, fn: Listener): void {
    this.#events.on(event, fn)
    this.#listeners.push([event, fn])
  }

  #children<C>(metric: CounterCells | HistogramCells, base: Readonly<Record<string, string>>): Children<C> {
    const children = new Children<C>(metric, base)
    this.#all.push(children as Children<unknown>)
    return children
  }
}
