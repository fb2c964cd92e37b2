/**
 * Partition ownership: the processes of one loop divide its partitions among themselves, each
 * partition owned by one process at a time.
 *
 * - **Members.** Each process keeps a key `m.<member>` in `<name>-members`, a KV bucket whose max age
 *   is the session timeout, and rewrites it a few times per timeout. A process that stops deletes it;
 *   one that dies, freezes or loses the server falls out when its key ages out.
 * - **Owners.** `p.<partition>` in `<name>-owners` names the partition's owner; the key's revision is
 *   the ownership's fencing token. Partitions are assigned by rendezvous hashing of (member,
 *   partition), capped at each member's share (`assign`): balanced, the same in every process that
 *   sees the same members, and moving few partitions when members come and go.
 * - **Claims and releases.** The desired owner writes the owner key by compare-and-set — created when
 *   absent, updated when its owner is no longer a member (a takeover). A live owner that is no longer
 *   the desired one releases: it stops taking the partition's messages, lets its running ones end
 *   (bounded by the runner), then deletes the key by compare-and-set; the desired owner, watching,
 *   claims it at once.
 * - **The session.** This process holds its partitions only while its last successful member write,
 *   timed from before it was sent, is younger than the session timeout less a margin, on its own
 *   monotonic clock: a process that was frozen or cut off knows its partitions are gone before the
 *   server's copy of its key ages out and another process takes them.
 *
 * @module
 */
import type { Clock } from '@flowing/core'
import { type KV, type KvEntry, Kvm } from '@nats-io/kv'
import type { NatsConnection } from '@nats-io/transport-node'
import { TopologyError } from '../errors.js'
import { assign } from './assignment.js'
import { every, within } from './timers.js'

/** What the owner of a partition does when it gains or loses one. */
export interface OwnershipHandlers {
  /**
   * This process now owns `partition` under `token`; `takenOver` when its previous owner had died
   * (its unfinished messages were interrupted), not released it.
   */
  gained(partition: number, token: number, takenOver: boolean): Promise<void>
  /**
   * This process no longer owns `partition`. `graceful` (a rebalance or a stop): its running messages
   * may end and be acknowledged before this resolves — the token still holds until then. Not
   * graceful (the session lapsed): the token is already void.
   */
  lost(partition: number, graceful: boolean): Promise<void>
}

/** How ownership is kept. */
export interface OwnershipOptions {
  readonly name: string
  readonly partitions: number
  /** A member whose key was not rewritten for this long is gone (ms). */
  readonly sessionMs: number
  readonly replicas: number
  readonly clock: Clock
  readonly report: (error: unknown) => void
  /** Told how many processes are members (this one included) when a look finds another count. */
  readonly membersChanged?: (count: number) => void
}

/** The loop's member and owner buckets (the owners bucket also keeps the crash counts). */
export interface OwnershipBuckets {
  readonly members: KV
  readonly owners: KV
}

/** The fraction of the session a process gives itself: it lets go before the server forgets it. */
const SESSION_MARGIN = 0.25

/** One process's share of a loop's partitions. */
export class Ownership {
  /** This process's member id. */
  readonly member: string
  readonly #o: OwnershipOptions
  readonly #members: KV
  readonly #owners: KV
  readonly #handlers: OwnershipHandlers
  // Owned partitions and their tokens; those being released still hold theirs until the release ends.
  readonly #owned = new Map<number, number>()
  readonly #releasing = new Set<number>()
  // The members seen at the last look.
  #live: ReadonlySet<string> = new Set()
  #lastBeat = Number.NEGATIVE_INFINITY
  // Partitions whose tokens a lapsed session voided, until their owner keys are cleared.
  readonly #voided = new Map<number, number>()
  #stopTicker: (() => void) | undefined
  readonly #watches: { stop(): void }[] = []
  #running: Promise<void> = Promise.resolve()
  #again = false
  #stopped = false

  constructor(buckets: OwnershipBuckets, o: OwnershipOptions, handlers: OwnershipHandlers) {
    this.member = globalThis.crypto.randomUUID().replaceAll('-', '')
    this.#o = o
    this.#members = buckets.members
    this.#owners = buckets.owners
    this.#handlers = handlers
  }

  /** Opens (or creates) the loop's member and owner buckets. */
  static async buckets(nc: NatsConnection, o: OwnershipOptions): Promise<OwnershipBuckets> {
    const kvm = new Kvm(nc)
    const members = await kvm.create(`${o.name}-members`, { history: 1, ttl: o.sessionMs, replicas: o.replicas })
    // A process that counted on a longer session than the server keeps its key could still act as an
    // owner after another took over: every process of the loop must agree.
    const { ttl } = await members.status()
    if (ttl !== o.sessionMs) {
      throw new TopologyError(
        `KV_${o.name}-members`,
        `its members' sessions last ${ttl} ms and this process asks for ${o.sessionMs} ms (sessionMs) — give every process the same sessionMs, or delete the bucket while no process runs to change it`,
      )
    }
    const owners = await kvm.create(`${o.name}-owners`, { history: 1, replicas: o.replicas })
    return { members, owners }
  }

  /** Opens the buckets and makes a member (not yet joined: see {@link Ownership.start}). */
  static async open(nc: NatsConnection, o: OwnershipOptions, handlers: OwnershipHandlers): Promise<Ownership> {
    return new Ownership(await Ownership.buckets(nc, o), o, handlers)
  }

  /** Joins: writes its member key, claims its share, and keeps both up (a few times per session). */
  async start(): Promise<void> {
    await this.#beat()
    this.#stopTicker = every(this.#o.clock, Math.max(50, this.#o.sessionMs / 4), () => {
      // Not through the chain of looks, which a long release or a hung request could hold: the
      // session is renewed on time, and a lapsed one lets go now.
      void this.#beat()
      this.#schedule()
    })
    // A join, a leave or a release elsewhere: look again at once (an aged-out member has no event;
    // members' rewrites of their own keys are no news).
    await this.#watch(this.#members, (e) => e.operation !== 'PUT' || !this.#live.has(e.key.slice(2)))
    await this.#watch(this.#owners, (e) => e.operation !== 'PUT')
    this.#schedule()
    await this.#running
  }

  async #watch(kv: KV, news: (e: KvEntry) => boolean): Promise<void> {
    const watch = await kv.watch({ include: 'updates' })
    this.#watches.push(watch)
    void (async () => {
      for await (const e of watch) if (news(e)) this.#schedule()
    })().catch(this.#o.report)
  }

  /** Whether this process still owns `partition` under `token` (its session fresh). */
  holds(partition: number, token: number): boolean {
    return this.#owned.get(partition) === token && this.#fresh()
  }

  /**
   * Until when (on the clock, ms) the session lets this process hold its partitions, unless it is
   * renewed before.
   */
  validUntil(): number {
    return this.#lastBeat + this.#o.sessionMs * (1 - SESSION_MARGIN)
  }

  /** The partitions this process owns now. */
  owned(): number[] {
    return [...this.#owned.keys()]
  }

  /** Releases every partition (each after its running messages end), then leaves. */
  async stop(): Promise<void> {
    this.#stopped = true
    this.#stopTicker?.()
    for (const w of this.#watches) w.stop()
    await this.#running
    await Promise.all([...this.#owned.keys()].map((p) => this.#release(p)))
    await this.#members.delete(`m.${this.member}`).catch(this.#o.report)
  }

  #fresh(): boolean {
    return this.#o.clock.now() < this.validUntil()
  }

  // One look at a time; a request while one runs makes one more after it.
  #schedule(): void {
    if (this.#stopped) return
    if (this.#again) return
    this.#again = true
    this.#running = this.#running.then(async () => {
      this.#again = false
      if (this.#stopped) return
      // A look that a lost connection holds up is given up after a session: the next one starts over.
      const look = this.#look()
      await within(this.#o.clock, this.#o.sessionMs, look.catch(this.#o.report))
    })
    this.#running.catch(this.#o.report)
  }

  // Rewrites the member key; a session that lapsed first (frozen, cut off) voids every token.
  async #beat(): Promise<void> {
    if (this.#stopped) return
    if (!this.#fresh()) await this.#dropAll()
    const sent = this.#o.clock.now()
    try {
      await this.#members.put(`m.${this.member}`, sent.toString())
      this.#lastBeat = Math.max(this.#lastBeat, sent)
    } catch (error) {
      this.#o.report(error)
    }
  }

  async #dropAll(): Promise<void> {
    const dropped = [...this.#owned]
    this.#owned.clear()
    for (const [p, token] of dropped) {
      this.#voided.set(p, token)
      await this.#handlers.lost(p, false).catch(this.#o.report)
    }
  }

  // Owner keys naming this process under a token its lapsed session voided: deleted (by compare-and-set).
  async #clearVoided(): Promise<void> {
    for (const [p, token] of [...this.#voided]) {
      this.#voided.delete(p)
      await this.#owners.delete(`p.${p}`, { previousSeq: token }).catch(() => {})
    }
  }

  // Compares what it owns with what it should, and moves the difference.
  async #look(): Promise<void> {
    if (!this.#fresh()) return
    await this.#clearVoided()
    const live = await this.#liveMembers()
    live.add(this.member)
    if (live.size !== this.#live.size) this.#o.membersChanged?.(live.size)
    this.#live = live
    const owners = assign([...live].sort(), this.#o.partitions)
    const moves: Promise<void>[] = []
    for (let p = 0; p < this.#o.partitions; p++) {
      const desired = owners[p]
      const owned = this.#owned.has(p)
      if (owned && desired !== this.member && !this.#releasing.has(p)) moves.push(this.#release(p))
      else if (!owned && desired === this.member) moves.push(this.#claim(p, live))
    }
    await Promise.all(moves)
  }

  async #liveMembers(): Promise<Set<string>> {
    const live = new Set<string>()
    for await (const key of await this.#members.keys('m.>')) live.add(key.slice(2))
    return live
  }

  async #claim(p: number, live: ReadonlySet<string>): Promise<void> {
    if (this.#owned.has(p)) return
    const key = `p.${p}`
    const value = JSON.stringify({ member: this.member })
    try {
      const entry = await this.#owners.get(key)
      let token: number
      let takenOver = false
      if (entry === null || entry.operation !== 'PUT') token = await this.#owners.create(key, value)
      else {
        const holder = (entry.json() as { member?: string }).member
        if (holder !== this.member && holder !== undefined && live.has(holder)) return // it will release
        takenOver = holder !== this.member
        token = await this.#owners.update(key, value, entry.revision)
      }
      if (this.#stopped || this.#owned.has(p)) return
      this.#owned.set(p, token)
      await this.#handlers.gained(p, token, takenOver).catch(async (error: unknown) => {
        // It could not take the partition up (the server went away): it gives the claim back, and a
        // later look claims it again.
        this.#owned.delete(p)
        await this.#owners.delete(key, { previousSeq: token }).catch(() => {})
        throw error
      })
      // The session lapsed while it was taken up (`lost` came before the runner held it): let it go.
      if (this.#owned.get(p) !== token) await this.#handlers.lost(p, false)
    } catch (error) {
      // Another process won the compare-and-set, or the server is away: the next look tries again.
      if (!isConflict(error)) this.#o.report(error)
    }
  }

  async #release(p: number): Promise<void> {
    const token = this.#owned.get(p)
    if (token === undefined) return
    this.#releasing.add(p)
    try {
      await this.#handlers.lost(p, true)
    } finally {
      this.#releasing.delete(p)
    }
    if (this.#owned.get(p) !== token) return // the session lapsed meanwhile: the token was voided
    this.#owned.delete(p)
    await this.#owners.delete(`p.${p}`, { previousSeq: token }).catch((error: unknown) => {
      if (!isConflict(error)) this.#o.report(error)
    })
  }
}

// A compare-and-set lost to another writer (wrong last sequence, or the key exists).
function isConflict(error: unknown): boolean {
  const text = String((error as { message?: unknown } | null)?.message ?? error)
  return /wrong last sequence|key exists/i.test(text)
}
