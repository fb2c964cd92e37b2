import { Heap } from 'heap-js'
import type { GroupLoad } from '../contracts/inspection.js'
import { type Envelope, Where } from '../internal/envelope.js'

/** Where a message's group and a group's concurrency come from. */
export interface GroupSource {
  /** The group `m` was posted with, if any. */
  of(m: Envelope): string | undefined
  /** How many messages of `group` may run at once. */
  limit(group: string): number
}

/**
 * Key groups with a concurrency limit: at most N messages of one group run at once (a tenant's
 * share of the workers, a downstream's connection limit). A message that reaches the front while
 * its group is full waits in its group's lane — ordered by urgency, so FIFO among equal priority —
 * and the lane's head competes again when one of the group's attempts ends. Its key stays claimed
 * meanwhile (the run queue's holders), so a key's order holds across groups too.
 */
export class KeyGroups {
  readonly #source: GroupSource
  readonly #compare: (a: Envelope, b: Envelope) => number
  // Attempts running per group (absent: none), and the lanes of those waiting.
  readonly #running = new Map<string, number>()
  readonly #lanes = new Map<string, Heap<Envelope>>()
  #waiting = 0

  constructor(source: GroupSource, compare: (a: Envelope, b: Envelope) => number) {
    this.#source = source
    this.#compare = compare
  }

  /** Messages waiting for room in their group. */
  get waiting(): number {
    return this.#waiting
  }

  /** Attempts of `group` running now. */
  running(group: string): number {
    return this.#running.get(group) ?? 0
  }

  /** Each group with attempts running or messages waiting, and its limit (for `loop.inspect()`: O(groups)). */
  loads(): GroupLoad[] {
    const out: GroupLoad[] = []
    const load = (group: string) => {
      const waiting = this.#lanes.get(group)?.length ?? 0
      out.push({ group, running: this.running(group), limit: this.#source.limit(group), waiting })
    }
    for (const group of this.#running.keys()) load(group)
    for (const group of this.#lanes.keys()) if (!this.#running.has(group)) load(group)
    return out
  }

  /** `m` has no group, or its group has room. */
  hasRoom(m: Envelope): boolean {
    const group = this.#source.of(m)
    return group === undefined || (this.#running.get(group) ?? 0) < this.#source.limit(group)
  }

  /** `m` (whose group is full) waits in its group's lane. */
  wait(m: Envelope): void {
    const group = this.#source.of(m) as string
    let lane = this.#lanes.get(group)
    if (lane === undefined) {
      lane = new Heap<Envelope>(this.#compare)
      this.#lanes.set(group, lane)
    }
    m.where = Where.Grouped
    lane.add(m)
    this.#waiting++
  }

  /** `m` starts: it takes one of its group's slots. */
  claim(m: Envelope): void {
    const group = this.#source.of(m)
    if (group !== undefined) this.#running.set(group, (this.#running.get(group) ?? 0) + 1)
  }

  /**
   * An attempt of `m` ended: its slot is free. Returns the group's next waiting message (taken out
   * of the lane), if the group now has room for it.
   */
  release(m: Envelope): Envelope | undefined {
    const group = this.#source.of(m)
    if (group === undefined) return undefined
    const running = (this.#running.get(group) ?? 1) - 1
    if (running === 0) this.#running.delete(group)
    else this.#running.set(group, running)
    return this.#next(group, running)
  }

  /**
   * `m` will not run (cancelled) and never took a slot — it may be the message {@link KeyGroups.release}
   * handed out, which the lane was waiting for. Returns the group's next waiting message if the group
   * has room, so a lane never waits on a slot that nothing holds. At worst this hands out one message
   * too many: it finds the group full when it reaches the front and waits in the lane again.
   */
  vacated(m: Envelope): Envelope | undefined {
    const group = this.#source.of(m)
    return group === undefined ? undefined : this.#next(group, this.#running.get(group) ?? 0)
  }

  // The lane's head, taken out, when `group` (with `running` attempts) has room for it.
  #next(group: string, running: number): Envelope | undefined {
    const lane = this.#lanes.get(group)
    if (lane === undefined || running >= this.#source.limit(group)) return undefined
    const next = lane.pop() as Envelope
    if (lane.length === 0) this.#lanes.delete(group)
    this.#waiting--
    return next
  }

  /** Removes a waiting message (cancelled). */
  remove(m: Envelope): void {
    const group = this.#source.of(m) as string
    const lane = this.#lanes.get(group)
    if (lane === undefined || !lane.remove(m)) return
    if (lane.length === 0) this.#lanes.delete(group)
    this.#waiting--
  }

  /** The waiting message that `matches`, if any. */
  find(matches: (m: Envelope) => boolean): Envelope | undefined {
    for (const lane of this.#lanes.values()) {
      const m = lane.heapArray.find(matches)
      if (m !== undefined) return m
    }
    return undefined
  }

  /** Removes and returns every waiting message (a stop). */
  clear(): Envelope[] {
    const all: Envelope[] = []
    for (const lane of this.#lanes.values()) for (const m of lane.heapArray) all.push(m)
    this.#lanes.clear()
    this.#waiting = 0
    return all
  }
}
