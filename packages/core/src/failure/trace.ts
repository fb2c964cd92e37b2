/**
 * Per-message lifecycle traces: every state a message went through and every attempt it made, readable
 * with `loop.trace(id)`.
 *
 * @module
 */

import type { MessageKey } from '../contracts/message.js'
import type { MessageState, MessageTrace } from '../contracts/traces.js'
import type { Envelope } from '../internal/envelope.js'
import { Ring } from '../internal/ring.js'
import { Trace } from './trace-record.js'

// The states that end a message (a trace in one of them is retired).
function isFinal(state: MessageState): boolean {
  return (
    state === 'succeeded' ||
    state === 'dead-lettered' ||
    state === 'request-failed' ||
    state === 'dropped' ||
    state === 'cancelled' ||
    state === 'snapshotted'
  )
}

/**
 * The loop's traces. With `traces: 'failures'` (the default) a message gets a trace the first time
 * something goes wrong — an attempt fails, its breaker holds it — seeded with the steps it took before
 * (queued, running), so the happy path costs one size check. With `'all'` every message is traced
 * from admission. Finished traces stay readable, the most recent `keep` of them.
 */
export class Traces {
  readonly all: boolean
  readonly #keep: number
  // Traces by sequence number (ids are `prefix:seq`): the live ones and the most recent `keep`
  // finished ones, in one map — retiring a trace moves nothing, and a lookup finds either.
  readonly #traces = new Map<number, Trace>()
  // The finished ones kept, oldest first: past `keep`, the first is forgotten (O(1)).
  readonly #finished = new Ring<Trace>()
  #live = 0
  // The last lookup, by sequence number: a start or an end notes several steps of one message in a
  // row, which then costs one map lookup, not one each.
  #lastSeq = -1
  #lastTrace: Trace | undefined = undefined

  /**
   * @param all - trace every message, not only troubled ones
   * @param keep - finished traces kept readable
   */
  constructor(all: boolean, keep: number) {
    this.all = all
    this.#keep = keep
  }

  /** Live traces. */
  get live(): number {
    return this.#live
  }

  /** The live trace of `m`, if it has one (cheap when none exists). */
  of(m: Envelope): Trace | undefined {
    if (this.#live === 0) return undefined
    const t = this.#lookup(m.seq)
    return t === undefined || t.done ? undefined : t
  }

  #lookup(seq: number): Trace | undefined {
    if (seq === this.#lastSeq) return this.#lastTrace
    const t = this.#traces.get(seq)
    this.#lastSeq = seq
    this.#lastTrace = t
    return t
  }

  /**
   * The trace of `m`, opened if needed, seeded with `queued` at its entry time.
   */
  open(m: Envelope): Trace {
    let t = this.of(m)
    if (t === undefined) {
      t = this.#start(m)
      t.note('queued', m.postedAt)
    }
    return t
  }

  /**
   * The trace of `m` for an attempt that started at `startedAt`: opened if needed, seeded with
   * `queued` at its entry time and that attempt's `running` step (a trace opened when something went
   * wrong has not seen the start).
   */
  openAt(m: Envelope, startedAt: number, attempt: number): Trace {
    const fresh = this.of(m) === undefined
    const t = this.open(m)
    if (fresh) t.note('running', startedAt, attempt)
    return t
  }

  /** Records a transition of `m` if it is traced (always, in `all` mode); final states retire the trace. */
  note(m: Envelope, state: MessageState, at: number, attempt?: number, detail?: string): void {
    let t = this.of(m)
    if (t === undefined) {
      if (!this.all) return
      t = this.#start(m)
    }
    t.note(state, at, attempt, detail)
    if (isFinal(state)) this.#retire(t)
  }

  /** A live or recently finished trace by sequence number. */
  find(seq: number): MessageTrace | undefined {
    return this.#traces.get(seq)?.toJSON()
  }

  /**
   * The live and kept finished traces of the messages with `key`, newest message first, at most
   * `limit` of them: a scan of every trace kept (for `loop.inspect()`, never per message).
   */
  tracesOf(key: MessageKey | undefined, limit = 20, traceId?: string): MessageTrace[] {
    const found: Trace[] = []
    for (const t of this.#traces.values()) {
      if ((key === undefined || t.key === key) && (traceId === undefined || t.traceId === traceId)) found.push(t)
    }
    found.sort((a, b) => b.seq - a.seq)
    return found.slice(0, limit).map((t) => t.toJSON())
  }

  #start(m: Envelope): Trace {
    const t = new Trace(m)
    this.#traces.set(m.seq, t) // (over a finished trace of the same message, if it had one)
    this.#lastSeq = m.seq
    this.#lastTrace = t
    this.#live++
    return t
  }

  #retire(t: Trace): void {
    t.done = true
    this.#live--
    if (this.#keep === 0) {
      this.#forget(t)
      return
    }
    const finished = this.#finished
    finished.push(t)
    if (finished.length > this.#keep) this.#forget(finished.shift() as Trace)
  }

  // Drops a finished trace, unless a newer trace of its message took its place.
  #forget(t: Trace): void {
    if (this.#lookup(t.seq) !== t) return
    this.#traces.delete(t.seq)
    this.#lastTrace = undefined // (the lookup above made it the last one)
  }
}
