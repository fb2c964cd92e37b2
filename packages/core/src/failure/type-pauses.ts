/**
 * An operator's pause on whole message types (`loop.controls.pauseType`): a paused type's messages are
 * admitted as usual, but each one that would start is held at its place instead — its key kept, as a
 * breaker holds — until the type resumes, when they go back to the queue in their order.
 *
 * ```
 *  a start ─▶ its type paused? ─yes─▶ held (its key kept) ──resumeType──▶ queued, in its order
 *                  └─no─▶ its route's breaker (./circuits.ts) ─▶ …
 * ```
 *
 * @module
 */
import { Heap } from 'heap-js'
import type { Envelope } from '../internal/envelope.js'

/** What the pauses ask of the loop. */
export interface PauseHost {
  /** A held message may run again (its type resumed): put it back in the queue. */
  release(m: Envelope): void
  /** A message was held (its type is paused). */
  held(m: Envelope): void
}

/** The paused types, each with the messages it holds, most urgent first. */
export class TypePauses {
  readonly #compare: (a: Envelope, b: Envelope) => number
  readonly #host: PauseHost
  readonly #paused = new Map<string, Heap<Envelope>>()
  #held = 0

  /**
   * @param compare - the queue's urgency order (held messages leave in it)
   * @param host - the loop
   */
  constructor(compare: (a: Envelope, b: Envelope) => number, host: PauseHost) {
    this.#compare = compare
    this.#host = host
  }

  /** Types paused now: while none is, nothing is held here and the start filter is one comparison. */
  get size(): number {
    return this.#paused.size
  }

  /** Messages held by paused types. */
  get held(): number {
    return this.#held
  }

  /** The paused types, in the order they were paused. */
  types(): string[] {
    return [...this.#paused.keys()]
  }

  /** Pauses `type`: from now on its messages are held as they would start. False when it already was. */
  pause(type: string): boolean {
    if (this.#paused.has(type)) return false
    this.#paused.set(type, new Heap<Envelope>(this.#compare))
    return true
  }

  /** Resumes `type`: what it held goes back to the queue, in its order. False when it was not paused. */
  resume(type: string): boolean {
    const held = this.#paused.get(type)
    if (held === undefined) return false
    this.#paused.delete(type) // first: a release may pump, and the queue asks again
    while (held.length > 0) {
      this.#held--
      this.#host.release(held.pop() as Envelope)
    }
    return true
  }

  /** Called when `m` would start: true (and `m` is now held) when its type is paused. */
  mustHold(m: Envelope): boolean {
    const held = this.#paused.get(m.type)
    if (held === undefined) return false
    held.push(m)
    this.#held++
    this.#host.held(m)
    return true
  }

  /** The held message with post number `seq`, if any. */
  find(seq: number): Envelope | undefined {
    for (const held of this.#paused.values()) {
      const m = held.heapArray.find((h) => h.seq === seq)
      if (m !== undefined) return m
    }
    return undefined
  }

  /** Removes a held message (cancelled); false when no pause holds it. */
  remove(m: Envelope): boolean {
    if (this.#paused.get(m.type)?.remove(m) !== true) return false
    this.#held--
    return true
  }

  /** Removes every held message (a stop without drain, a hand-back); the types stay paused. */
  clear(): Envelope[] {
    const all: Envelope[] = []
    for (const held of this.#paused.values()) {
      for (const m of held.toArray()) all.push(m) // not push(...): a spread of 100k+ arguments throws
      held.clear()
    }
    this.#held = 0
    return all
  }
}
