/**
 * The one hold on the queue of the circuit breakers and of the paused types: a message held by either
 * keeps its place — its key claimed, counted as `held` — so a cancel, a stop, a snapshot, the gauges
 * and `loop.inspect()` see a paused message as a held one. One start filter asks the pauses first (a
 * paused message takes no probe slot), then the breakers.
 *
 * @module
 */
import type { CircuitPolicy } from '../contracts/failures.js'
import type { Message, MessageMap } from '../contracts/message.js'
import type { Envelope } from '../internal/envelope.js'
import { type HoldingStage, QueueHold } from '../shutdown/holders.js'
import { Circuits } from './circuits.js'
import type { FailureParts } from './failure-ports.js'
import { TypePauses } from './type-pauses.js'

/** The breakers and the paused types, holding messages in their queue places. */
export class BreakerHold<M extends MessageMap> implements HoldingStage {
  /** The per-route breakers. */
  readonly circuits: Circuits
  /** The types an operator paused. */
  readonly pauses: TypePauses
  /** Their hold on the queue (places and keys), the loop's `breakers` holder. */
  readonly queueHold: QueueHold
  readonly #mustHold = (m: Envelope): boolean =>
    (this.pauses.size !== 0 && this.pauses.mustHold(m)) || this.circuits.mustHold(m)

  /**
   * @param h - the stages failure handling touches
   * @param compare - the queue's urgency order
   * @param policyFor - a type's breaker policy, or false when it has none
   */
  constructor(
    h: FailureParts<M>,
    compare: (a: Envelope, b: Envelope) => number,
    policyFor: (type: string) => CircuitPolicy | false,
  ) {
    const traces = h.records.traces
    const release = (m: Envelope, why: string): void => {
      this.queueHold.leave(m)
      traces.note(m, 'queued', h.clock.now(), undefined, why)
      h.holds.pump() // it kept its place: the queue's length did not change
    }
    this.circuits = new Circuits(h.clock, compare, policyFor, {
      release: (m) => release(m, 'released by its breaker'),
      held: (m, route) => {
        this.queueHold.enter(m) // first: a listener of `held` may call back into the loop
        h.metrics.held++
        traces.open(m).note('held', h.clock.now(), undefined, route)
        h.events.emit('held', m as unknown as Message<M>, route)
      },
      changed: (change) => h.events.emit('circuit', change),
    })
    this.pauses = new TypePauses(compare, {
      release: (m) => release(m, 'released: its type resumed'),
      held: (m) => {
        this.queueHold.enter(m)
        traces.open(m).note('held', h.clock.now(), undefined, 'paused')
      },
    })
    this.queueHold = new QueueHold(this, h.holds.queue, h.holds.starts, 'breaker')
  }

  /** From now on the queue asks the pauses and the breakers before a message starts (idempotent). */
  filterStarts(): void {
    this.queueHold.filterStarts(this.#mustHold)
  }

  /** Pauses `type` (see {@link TypePauses.pause}); false when it already was. */
  pause(type: string): boolean {
    this.filterStarts()
    return this.pauses.pause(type)
  }

  get held(): number {
    return this.circuits.held + this.pauses.held
  }

  clear(): Envelope[] {
    const all = this.circuits.clear()
    for (const m of this.pauses.clear()) all.push(m)
    return all
  }

  find(seq: number): Envelope | undefined {
    return this.pauses.find(seq) ?? this.circuits.find(seq)
  }

  remove(m: Envelope): boolean {
    return this.pauses.remove(m) || this.circuits.remove(m)
  }
}
