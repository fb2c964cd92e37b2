/**
 * Watermark backpressure over the partitions' fill — the same 60 / 80 / 95 % levels, events and
 * typed refusals as an in-process loop's queue, for every producer of a distributed loop. The fill is
 * the messages the partitions' streams store (waiting or held anywhere) over their bound together, read
 * from the server every
 * `intervalMs` of the loop's clock, plus what this process published since the last reading; between readings a
 * producer's own burst still moves the level.
 *
 * @module
 */

import { WatermarkController } from '@flowing/backpressure'
import {
  BackpressureError,
  type BackpressureOptions,
  type Clock,
  type PressureTransition,
  Priority,
  refusedPressure,
} from '@flowing/core'
import { every } from './timers.js'

/**
 * `backpressure` of a distributed loop: core's options, and how often the fill is read.
 *
 * @group NATS loop
 */
export interface StreamBackpressureOptions extends BackpressureOptions {
  /** How often the partitions' fill is read from the server (ms). @defaultValue 250 */
  readonly intervalMs?: number
}

/** What the partitions' streams hold together, and their bound. */
export interface WorkState {
  readonly messages: number
  readonly maxMessages: number
}

/** The pressure on one loop's partitions, as one producer sees it. */
export class StreamPressure {
  readonly #read: () => Promise<WorkState>
  #bound: number
  readonly #controller: WatermarkController
  readonly #shedAbove: number
  readonly #intervalMs: number
  readonly #clock: Clock
  #stored = 0
  #publishedSince = 0
  #stopReading: (() => void) | undefined

  /**
   * @param clock - the loop's clock: the controller's time and the reading's timer
   * @param onTransition - told of each level crossing (the loop's `backpressure` event)
   * @throws the controller's argument errors for bad marks
   */
  /** The loop's stream pressure, started (undefined without the `backpressure` option). */
  static started(
    o: {
      readonly clock: Clock
      readonly maxMessages: number
      readonly backpressure?: StreamBackpressureOptions | undefined
    },
    read: () => Promise<WorkState>,
    onTransition: (t: PressureTransition) => void,
  ): StreamPressure | undefined {
    if (o.backpressure === undefined) return undefined
    const pressure = new StreamPressure(o.clock, read, o.maxMessages, o.backpressure, onTransition)
    pressure.start()
    return pressure
  }

  constructor(
    clock: Clock,
    read: () => Promise<WorkState>,
    bound: number,
    options: StreamBackpressureOptions,
    onTransition: (t: PressureTransition) => void,
  ) {
    const { shedAbove = Priority.high, intervalMs = 250, ...marks } = options
    this.#clock = clock
    this.#read = read
    this.#bound = bound
    this.#shedAbove = shedAbove
    this.#intervalMs = intervalMs
    this.#controller = new WatermarkController({ ...marks, now: () => clock.now(), onTransition })
  }

  /** The fill as this producer knows it (0–1). */
  get fill(): number {
    return Math.min(1, (this.#stored + this.#publishedSince) / this.#bound)
  }

  /** Starts reading the stream's fill. */
  start(): void {
    const read = (): void => {
      this.#read().then(
        (work) => {
          this.#stored = work.messages
          if (work.maxMessages > 0) this.#bound = work.maxMessages // as the last process set it
          this.#publishedSince = 0
          this.#controller.update(this.fill)
        },
        () => {}, // no reading while the server is away: the last level holds
      )
    }
    read()
    this.#stopReading ??= every(this.#clock, this.#intervalMs, read)
  }

  /** Stops reading. */
  stop(): void {
    this.#stopReading?.()
    this.#stopReading = undefined
  }

  /** Admits a post of `priority`, or throws the `BackpressureError` an in-process loop would. */
  admit(type: string, priority: number): void {
    const fill = this.fill
    const decision = this.#controller.decide(fill, priority, this.#shedAbove)
    if (decision.admitted) {
      this.#publishedSince++
      return
    }
    throw new BackpressureError(type, priority, refusedPressure(this.#controller, decision, fill, this.#shedAbove))
  }
}
