import { Heap } from 'heap-js'
import type { MessageKey } from '../contracts/message.js'
import { type Envelope, Where } from '../internal/envelope.js'
import type { KeyGroups } from './key-groups.js'
import type { ReadyQueue } from './ready-queue.js'
import { type QueueFilters, StartFilters } from './start-filters.js'
import type { Urgency } from './urgency.js'

/**
 * Everything that waits, and the rule that picks what runs next: the most urgent *runnable* message
 * (BRIEF I3), where a keyed message is runnable only while its key is not busy (I2).
 *
 * ```
 *   post ─▶ ready (LevelQueue) ──┐
 *                                ├─ take(): best head by (rank, seq) ─▶ key busy? ─yes─▶ park in its lane
 *   key freed: lane head ─▶ unparked heap ─┘                            └─no──▶ run (key now busy)
 * ```
 *
 * Parking is lazy: a message is parked only when it reaches the front while its key runs, so keyless
 * and idle-key messages cost one ring push and one ring shift. A lane is a heap, so a key's messages
 * leave it in (rank, seq) order — equal priority ⇒ post order. When the key frees, only the lane's head
 * moves to the unparked heap, where it competes by urgency with everything else.
 */
export class RunQueue {
  readonly #ready: ReadyQueue
  readonly #urgency: Urgency
  // Keys whose message is running now (I2: at most one per key).
  readonly #busy = new Set<MessageKey>()
  // Entries so far: each pushed message's `order` (the tiebreak among equal urgency).
  #entries = 0
  // Messages that reached the front while their key was busy, per key.
  readonly #lanes = new Map<MessageKey, Heap<Envelope>>()
  // Lane heads released by a key that freed up; they compete with the ready queue by urgency.
  readonly #unparked: Heap<Envelope>
  #parked = 0
  // Keys kept claimed by a message that is not running: held by its breaker, or backing off before an
  // ordered retry. Later messages of the key park behind it (I2 across holds and retries).
  readonly #holders = new Map<MessageKey, Envelope>()
  #held = 0
  // Failed messages backing off before a retry: they keep their place (they count in `length`).
  #away = 0
  // Messages waiting for a rate limit (in a budget's lane), and ones cancelled while in the ready
  // queue, skipped when they reach its front.
  #limited = 0
  #dead = 0
  /** Key groups with a concurrency limit (the loop's `groups`), a filter of what starts. */
  readonly groups: KeyGroups | undefined
  // Asked when a message would start, after its key and its group: a breaker's hold, a rate limit.
  readonly #starts: StartFilters

  /**
   * @param ready - the priority structure for fresh messages
   * @param urgency - the shared (rank, seq) order
   * @param filters - the loop's key groups, and the start filters of breakers and rate limits
   */
  constructor(ready: ReadyQueue, urgency: Urgency, filters: QueueFilters = {}) {
    this.#ready = ready
    this.#urgency = urgency
    this.groups = filters.groups
    this.#starts = filters.starts ?? new StartFilters()
    this.#unparked = new Heap<Envelope>(urgency.compare)
  }

  /** Messages waiting in any structure (the number the capacity bounds). */
  get length(): number {
    const queued = this.#ready.length - this.#dead + this.#parked + this.#unparked.length
    return queued + this.#held + this.#away + this.#limited + (this.groups?.waiting ?? 0)
  }

  /** Messages that entered so far (posted, due, re-entering): it moves whenever work arrives. */
  get entries(): number {
    return this.#entries
  }

  /** Of `length`, messages waiting for a rate limit. */
  get limited(): number {
    return this.#limited
  }

  /** Of `length`, failed messages backing off before a retry. */
  get away(): number {
    return this.#away
  }

  /**
   * A failed message backs off before its retry: it keeps a place in the queue, so the retry re-enters
   * on time whatever the fill, and producers see the work still to do.
   */
  keepPlace(): void {
    this.#away++
  }

  /** A message that backed off is back (re-entering), cancelled or handed back: its place is free. */
  releasePlace(): void {
    this.#away--
  }

  /** Messages held by open circuit breakers (they count in {@link RunQueue.length}). */
  get held(): number {
    return this.#held
  }

  /** Messages waiting behind a busy key. */
  get parked(): number {
    return this.#parked
  }

  /** Number of keys running now. */
  get busyKeys(): number {
    return this.#busy.size
  }

  /**
   * For `loop.inspect()`, never per message: each busy key, then each other key with a lane, as [the key,
   * the message keeping it away from a worker (none: free, or its message runs), the messages parked on it].
   */
  *lanes(): Generator<[MessageKey, Envelope | undefined, number]> {
    for (const key of this.#busy) yield [key, this.#holders.get(key), this.#lanes.get(key)?.length ?? 0]
    for (const [key, lane] of this.#lanes) if (!this.#busy.has(key)) yield [key, undefined, lane.length]
  }

  /** Admits a newly posted message. */
  push(m: Envelope): void {
    m.where = Where.Ready
    m.order = ++this.#entries
    this.#ready.push(m)
  }

  /** Removes and returns the most urgent runnable message, marking its key busy; parks what it skips. */
  take(): Envelope | undefined {
    for (;;) {
      const m = this.#next()
      if (m === undefined) return undefined
      if (m.key !== undefined) {
        // One hash operation claims the key: `add` leaves the size unchanged iff the key was busy.
        const before = this.#busy.size
        if (this.#busy.add(m.key).size === before && !this.#ownsKey(m)) {
          this.#park(m)
          continue
        }
      }
      const groups = this.groups
      if (groups !== undefined && !groups.hasRoom(m)) {
        this.keepKey(m) // later messages of its key wait behind it
        groups.wait(m)
        continue
      }
      if (this.#starts.hold?.(m) === true) continue // held: see markHeld
      if (this.#starts.limit?.(m) === true) continue // waits for its rate limit: see markLimited
      groups?.claim(m)
      m.where = Where.Running
      return m
    }
  }

  /** Frees `key` after its message finished; its next message becomes runnable. */
  release(key: MessageKey): void {
    this.#busy.delete(key)
    if (this.#parked === 0) return // no lane exists: skip the lookup
    const lane = this.#lanes.get(key)
    if (lane === undefined) return
    const head = lane.pop() as Envelope
    if (lane.length === 0) this.#lanes.delete(key)
    this.#parked--
    head.where = Where.Unparked
    this.#unparked.add(head)
  }

  /**
   * The breakers' start filter kept `m` (its breaker is open): it stays counted in `length` and keeps
   * its key. Called before anything else learns of the hold (listeners may call back into the loop).
   */
  markHeld(m: Envelope): void {
    m.where = Where.Held
    this.#held++
    this.keepKey(m)
  }

  /** `m` waits for a rate limit (in its budget's lane): counted in `length`, its key kept. */
  markLimited(m: Envelope): void {
    m.where = Where.Limited
    this.#limited++
    this.keepKey(m)
  }

  /**
   * An attempt of `m` ended: its group's slot is free, and the group's next waiting message competes
   * by urgency again (still holding its key).
   */
  attemptEnded(m: Envelope): void {
    const next = this.groups?.release(m)
    if (next !== undefined) this.resume(next)
  }

  /**
   * `m` will not run (cancelled) and never took its group's slot: if its group has room, the group's
   * next waiting message competes by urgency again (it may be the one its group released for it).
   */
  vacated(m: Envelope): void {
    const next = this.groups?.vacated(m)
    if (next !== undefined) this.resume(next)
  }

  /**
   * Removes a message waiting in the queue — ready, parked, unparked or waiting for its group — that
   * will not run (cancelled); its key moves on. False when it is not in one of those.
   */
  remove(m: Envelope): boolean {
    switch (m.where) {
      case Where.Ready:
        this.#dead++ // skipped when it reaches the front (its outcome sets `where` to Done)
        break
      case Where.Parked: {
        const lane = this.#lanes.get(m.key as MessageKey) as Heap<Envelope>
        lane.remove(m)
        if (lane.length === 0) this.#lanes.delete(m.key as MessageKey)
        this.#parked--
        break
      }
      case Where.Unparked:
        this.#unparked.remove(m)
        // A lane's head that its key's release sent here: the key is free and the rest of its lane
        // waited for this one, so the next moves up (at worst a second message of the key competes
        // and parks again behind the first).
        if (m.key !== undefined && !this.#busy.has(m.key)) this.release(m.key)
        break
      case Where.Grouped:
        this.groups?.remove(m)
        break
      default:
        return false
    }
    this.#dropHolder(m)
    return true
  }

  /** Claims `m`'s key for `m` while it is away (a restored retry): true unless the key is busy. */
  claimKey(m: Envelope): boolean {
    if (m.key === undefined || this.#busy.has(m.key)) return false
    this.#busy.add(m.key)
    this.#holders.set(m.key, m)
    return true
  }

  /** Keeps `m`'s key claimed while `m` is away (held, or backing off before an ordered retry). */
  keepKey(m: Envelope): void {
    if (m.key !== undefined) this.#holders.set(m.key, m)
  }

  /**
   * Puts back a message that was held or backing off: it competes by urgency again, still holding its
   * key — no other message of the key may start before it (I2), whether parked or not yet at the front.
   */
  resume(m: Envelope): void {
    if (m.where === Where.Held) this.#held--
    else if (m.where === Where.Limited) this.#limited--
    m.where = Where.Unparked
    this.#unparked.add(m)
  }

  /**
   * A message that ran before (an unordered retry back from its back-off, a restored message with
   * attempts or a commit point) enters behind what entered meanwhile — but outside the ready queue, so
   * no overflow policy can evict it: an accepted attempt is never shed.
   */
  reenter(m: Envelope): void {
    m.order = ++this.#entries
    m.where = Where.Unparked
    this.#unparked.add(m)
  }

  /** Forgets a held or backing-off message that will not run (cancelled): the key it kept moves on. */
  forget(m: Envelope): void {
    if (m.where === Where.Held) this.#held--
    else if (m.where === Where.Limited) this.#limited--
    this.#dropHolder(m)
  }

  // `m` kept its key while away: the key moves on.
  #dropHolder(m: Envelope): void {
    if (m.key !== undefined && this.#holders.get(m.key) === m) {
      this.#holders.delete(m.key)
      this.release(m.key)
    }
  }

  /**
   * Evicts the oldest ready message of the least urgent level, if that level is `minPriority` or less
   * urgent. Messages parked behind a busy key are not candidates: they have already reached the front.
   */
  evictLowest(minPriority: number): Envelope | undefined {
    let victim = this.#ready.evictLowest(minPriority)
    while (victim !== undefined && victim.where !== Where.Ready) {
      this.#dead-- // cancelled while it waited
      victim = this.#ready.evictLowest(minPriority)
    }
    if (victim !== undefined) victim.where = Where.HandedOver // dropped right after the newcomer is queued
    return victim
  }

  /** The waiting message with post number `seq` (a scan: for `loop.cancel(id)`), if any. */
  find(seq: number): Envelope | undefined {
    for (const m of this.#ready.values()) if (m.seq === seq && m.where === Where.Ready) return m
    const bySeq = (m: Envelope) => m.seq === seq
    for (const lane of this.#lanes.values()) {
      const m = lane.heapArray.find(bySeq)
      if (m !== undefined) return m
    }
    return this.#unparked.heapArray.find(bySeq) ?? this.groups?.find(bySeq)
  }

  /** Removes and returns every waiting message (for a stop without drain). */
  clear(): Envelope[] {
    const all = [...this.#ready.values()].filter((m) => m.where === Where.Ready)
    for (const m of this.#unparked.heapArray) all.push(m)
    for (const m of this.groups?.clear() ?? []) all.push(m)
    // Not push(...lane): a hot key with 100k+ parked messages would throw RangeError (too many arguments).
    for (const lane of this.#lanes.values()) for (const m of lane.heapArray) all.push(m)
    all.sort(this.#urgency.compare)
    while (this.#ready.shift() !== undefined) {}
    this.#unparked.clear()
    this.#lanes.clear()
    this.#parked = 0
    this.#dead = 0
    for (const key of this.#holders.keys()) this.#busy.delete(key) // resumed messages' keys
    this.#holders.clear()
    return all
  }

  #next(): Envelope | undefined {
    if (this.#dead > 0) this.#liveHead()
    const u = this.#unparked.peek()
    if (u === undefined) return this.#ready.shift()
    const r = this.#ready.peek()
    return r !== undefined && this.#urgency.compare(r, u) < 0 ? this.#ready.shift() : this.#unparked.pop()
  }

  // Drops the cancelled messages at the ready queue's front.
  #liveHead(): void {
    for (let r = this.#ready.peek(); r !== undefined && r.where !== Where.Ready; r = this.#ready.peek()) {
      this.#ready.shift()
      this.#dead--
    }
  }

  // A resumed message that kept its key takes it back (the claim passes from holding to running).
  #ownsKey(m: Envelope): boolean {
    if (this.#holders.size === 0 || this.#holders.get(m.key as MessageKey) !== m) return false
    this.#holders.delete(m.key as MessageKey)
    return true
  }

  #park(m: Envelope): void {
    let lane = this.#lanes.get(m.key as MessageKey)
    if (lane === undefined) {
      lane = new Heap<Envelope>(this.#urgency.compare)
      this.#lanes.set(m.key as MessageKey, lane)
    }
    m.where = Where.Parked
    lane.add(m)
    this.#parked++
  }
}
