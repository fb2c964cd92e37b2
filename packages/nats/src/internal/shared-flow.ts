/**
 * Circuit breakers and "too many requests" pauses shared by the processes of one loop, through the KV
 * bucket `<name>-circuits`, so three processes do not hit a failing or rate-limited downstream three
 * times as hard:
 *
 * - **Breakers.** When a breaker opens in one process — its own failures, or a probe that failed — it
 *   writes the route's state (key: the route), and every other process, watching the bucket, opens its
 *   breaker of the route for the rest of the same cooldown (by wall-clock time) without waiting for
 *   failures of its own. A breaker that closes after its probes succeeded closes the others the same
 *   way. Past the first process's trip, each sends only its probes.
 * - **Retry-after pauses.** When a handler's `RateLimitError` of scope `route` pauses a route in one
 *   process, it writes the pause's end (key: `retry-after.<route>`), and every other process pauses
 *   the route until then (`loop.controls.pauseRoute`), then throttles it as its own 429 would. Pauses
 *   of scope `key` need no sharing (a key's messages run in the one process that owns its partition);
 *   those of scope `group` stay in the process that received them.
 *
 * Forced changes (reason `forced`) and pauses applied from the bucket are not written back, so a change
 * goes around once. The staleness is the watch's: a change reaches the other processes within one
 * delivery from the server (milliseconds); a process cut off from the server trips on its own counts.
 *
 * @module
 */
import {
  type CircuitChange,
  type Clock,
  type Loop,
  type Message,
  type MessageMap,
  type MessageType,
  type RateLimitHold,
  wallNow,
} from '@flowing/core'
import { type KV, type KvEntry, Kvm } from '@nats-io/kv'
import type { NatsConnection } from '@nats-io/transport-node'
import { encodeKey } from './kv-keys.js'

/** A route's breaker as one process last wrote it. */
interface SharedCircuit {
  readonly member: string
  readonly type: string
  readonly routeKey?: string
  readonly open: boolean
  /** Until when it is open (epoch ms), for an open one. */
  readonly untilEpochMs?: number
}

/** A route's retry-after pause as one process last wrote it. */
interface SharedPause {
  readonly member: string
  readonly kind: 'retry-after'
  readonly type: string
  readonly routeKey?: string
  /** Until when the route is paused (epoch ms). */
  readonly untilEpochMs: number
}

// The prefix of a pause's key (a breaker's key, an encoded route, never holds a dot).
const PAUSE = 'retry-after.'
// A pause that ends at most this much later than the one last shared for its route is no news (ms).
const PAUSE_SLACK_MS = 50

/** Shares one process's breakers and retry-after pauses with the others of its loop. */
export class SharedFlow<M extends MessageMap> {
  readonly #kv: KV
  readonly #local: Loop<M>
  readonly #member: string
  readonly #clock: Clock
  readonly #report: (error: unknown) => void
  // Per route: the end (epoch ms) of the latest pause shared or followed.
  readonly #pausedUntil = new Map<string, number>()
  #watch: { stop(): void } | undefined
  readonly #off: () => void

  /**
   * @param member - this process's member id (its own writes are no news)
   */
  constructor(kv: KV, local: Loop<M>, member: string, clock: Clock, report: (error: unknown) => void) {
    this.#kv = kv
    this.#local = local
    this.#member = member
    this.#clock = clock
    this.#report = report
    const onCircuit = (change: CircuitChange) => this.#changed(change)
    const onLimited = (m: Message<M>, hold: RateLimitHold) => this.#limited(m, hold)
    local.events.on('circuit', onCircuit)
    local.events.on('rate-limited', onLimited)
    this.#off = () => {
      local.events.off('circuit', onCircuit)
      local.events.off('rate-limited', onLimited)
    }
  }

  /** Opens (or creates) the loop's bucket. */
  static bucket(nc: NatsConnection, name: string, replicas: number): Promise<KV> {
    return new Kvm(nc).create(`${name}-circuits`, { history: 1, replicas })
  }

  /** Follows the others' breakers and pauses: those in force now first, then every change. */
  async start(): Promise<void> {
    const watch = await this.#kv.watch()
    this.#watch = watch
    void (async () => {
      for await (const e of watch) this.#follow(e)
    })().catch(this.#report)
  }

  /** Stops following and sharing. */
  stop(): void {
    this.#off()
    this.#watch?.stop()
  }

  #changed(change: CircuitChange): void {
    if (change.reason === 'forced' || change.state === 'half-open') return
    const routeKey = change.route === change.type ? undefined : change.route.slice(change.type.length + 1)
    const open = change.state === 'open'
    const shared: SharedCircuit = {
      member: this.#member,
      type: change.type,
      ...(routeKey === undefined ? {} : { routeKey }),
      open,
      ...(open ? { untilEpochMs: wallNow(this.#clock) + (change.cooldownMs ?? 0) } : {}),
    }
    this.#kv.put(encodeKey(change.route), JSON.stringify(shared)).catch(this.#report)
  }

  // A handler's own 429 (the hold that carries `retryAfterMs`) of scope route: shared, once per pause.
  #limited(m: Message<M>, hold: RateLimitHold): void {
    if (hold.retryAfterMs === undefined || hold.retryAfterScope !== 'route') return
    const route = hold.limit.slice('retry-after:'.length)
    const untilEpochMs = wallNow(this.#clock) + (hold.until - this.#clock.now())
    if (!this.#newPause(route, untilEpochMs)) return
    const routeKey = route === m.type ? undefined : route.slice(m.type.length + 1)
    const shared: SharedPause = {
      member: this.#member,
      kind: 'retry-after',
      type: m.type,
      ...(routeKey === undefined ? {} : { routeKey }),
      untilEpochMs,
    }
    this.#kv.put(`${PAUSE}${encodeKey(route)}`, JSON.stringify(shared)).catch(this.#report)
  }

  // Whether a pause of `route` until `untilEpochMs` ends later than the last one known (then kept).
  #newPause(route: string, untilEpochMs: number): boolean {
    if (untilEpochMs <= (this.#pausedUntil.get(route) ?? 0) + PAUSE_SLACK_MS) return false
    this.#pausedUntil.set(route, untilEpochMs)
    return true
  }

  #follow(e: KvEntry): void {
    if (e.operation !== 'PUT') return
    let c: SharedCircuit | SharedPause
    try {
      c = e.json<SharedCircuit | SharedPause>()
    } catch {
      return // not ours
    }
    if (c.member === this.#member || typeof c.type !== 'string') return
    const options = c.routeKey === undefined ? {} : { routeKey: c.routeKey }
    const type = c.type as MessageType<M>
    const ms = (c.untilEpochMs ?? 0) - wallNow(this.#clock)
    try {
      if ('kind' in c) this.#followPause(type, c, ms)
      else if (!c.open) this.#local.controls.closeCircuit(type, options)
      else if (ms > 0) this.#local.controls.openCircuit(type, { ...options, cooldownMs: ms })
    } catch {
      // A type this process does not handle, or handles without a breaker: nothing to follow.
    }
  }

  #followPause(type: MessageType<M>, p: SharedPause, ms: number): void {
    if (ms <= 0 || typeof p.untilEpochMs !== 'number') return
    const route = p.routeKey === undefined ? p.type : `${p.type}/${p.routeKey}`
    this.#pausedUntil.set(route, Math.max(this.#pausedUntil.get(route) ?? 0, p.untilEpochMs))
    const routeKey = p.routeKey === undefined ? {} : { routeKey: p.routeKey }
    this.#local.controls.pauseRoute(type, { ...routeKey, retryAfterMs: Math.min(ms, 86_400_000) })
  }
}
