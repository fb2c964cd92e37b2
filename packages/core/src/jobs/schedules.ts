/**
 * Recurring schedules. A schedule lives in the message of its next fire — a delayed message of its
 * type and payload that carries the schedule's state (`ScheduleState`: spec, options, runs, the due
 * time it fires for) — so it survives whatever a delayed message survives: a snapshot, a journal, a
 * `kill -9`. When that message comes due it *is* the fire (a normal message: priority, key, retries,
 * dead letters) and, in the same turn and so in the same journal batch, the next fire is posted.
 * Every fire's idempotency key is `schedule:<id>@<due time>`: a fire is never run twice.
 *
 * ```
 *  upsert ─▶ check ─▶ (journal not recovered yet: wait for start) ─▶ post the next fire ─┐
 *        ┌───────────────────────────────────────────────────────────────────────────────┘
 *        └▶ delayed ─(due)─▶ the fire enters the queue ─▶ post the next fire (runs + 1) ─▶ …
 *  restart ─▶ reconcile: the recovered next fire, the code's upsert, the missed-fire policy
 * ```
 *
 * @module
 */

import { checkPostOptions } from '../admission/post-options.js'
import { wallNow } from '../clock.js'
import type { Clock } from '../contracts/clock.js'
import type { PostOptions } from '../contracts/message.js'
import type { ScheduleInfo, ScheduleOptions, ScheduleState } from '../contracts/schedules.js'
import { InvalidArgumentError } from '../errors.js'
import type { Envelope } from '../internal/envelope.js'
import type { PostExtras } from '../internal/post-extras.js'
import * as check from '../internal/validate.js'
import type { DelayedMessage } from '../timers/delayed-posts.js'
import { isWaiting } from './keyed-jobs.js'
import { checkScheduleOptions, type Definition, defineSchedule, sameDefinition } from './schedule-definition.js'
import { missedFires, nextFire } from './schedule-spec.js'
import { Definitions, type Held, infoOf, stateOf } from './schedule-state.js'

// A next fire that comes due later than this past its due time (and jitter) skips to the first due time
// after now instead of catching up the ones between (the process was frozen, not down: no missed policy).
const CATCH_UP_MS = 60_000

// A paused schedule's message waits this long (it is cancelled on resume): about 285 years.
const PAUSED_MS = 2 ** 53 / 1000

/** What schedules touch. */
export interface ScheduleParts {
  readonly clock: Clock
  readonly extras: PostExtras
  /** Throws `UnknownMessageTypeError` for a type without a handler; refuses a payload its check refuses. */
  readonly registry: { resolve(type: string): unknown; checkPayload(type: string, payload: unknown): void }
  readonly admission: {
    schedule(type: string, payload: unknown, dueAt: number, o: PostOptions, internal: boolean): DelayedMessage
  }
  readonly hooks: ScheduleHooks
  /** Cancels a waiting message (its outcome `cancelled`). */
  cancel(m: Envelope, why: string): unknown
}

/** What schedules ask of the loop's lifecycle and clock. */
export interface ScheduleHooks {
  /** Whether posts wait for `start()` to recover the journal first. */
  awaitingRecovery(): boolean
  /** Throws `LoopStoppedError` once a stop began (`action`: what was refused). */
  refuseIfStopping(action: string): void
  /** The next fire of schedule `id` was refused (it is tried again): reported, not thrown. */
  refused(id: string, error: unknown): void
  /** Runs `retry` in a second (on the loop's releasable clock). */
  later(retry: () => void): void
}

/** The schedules of one loop. */
export class Schedules {
  readonly #p: ScheduleParts
  // Upserts made before the journal was recovered: applied by the reconcile that follows it.
  readonly #deferred = new Map<string, Definition>()
  readonly #definitions = new Definitions()
  // Schedules whose next fire was refused, by the fire that came due: tried again until it is accepted.
  readonly #retrying = new Map<string, Envelope>()
  // Removed before the journal was recovered: the recovery's schedule of that id is cancelled.
  readonly #removed = new Set<string>()
  // Next fires this loop posted (or reconciled): a later restore leaves them alone.
  readonly #own = new WeakSet<Envelope>()

  constructor(parts: ScheduleParts) {
    this.#p = parts
  }

  /** `loop.schedule()`: checks everything, then replaces the schedule `id` (no duplicate fire). */
  upsert(
    id: unknown,
    spec: unknown,
    type: string,
    payload: unknown,
    options: ScheduleOptions | undefined,
  ): ScheduleInfo {
    this.#p.hooks.refuseIfStopping('schedule')
    const def = this.#check(id, spec, type, payload, options)
    if (this.#p.hooks.awaitingRecovery()) {
      this.#removed.delete(def.id)
      this.#deferred.set(def.id, def)
      return infoOf(def, 0, undefined)
    }
    const held = this.#held(def.id)
    if (held !== undefined && sameDefinition(held.def, def)) return this.get(def.id) as ScheduleInfo // paused stays so
    this.#replace(def, held, held?.state.runs ?? 0)
    return this.get(def.id) ?? infoOf(def, held?.state.runs ?? 0, undefined)
  }

  // Everything an upsert checks before it changes anything (a getter or a Proxy that throws: typed).
  #check(id: unknown, spec: unknown, type: string, payload: unknown, options: ScheduleOptions | undefined): Definition {
    const now = wallNow(this.#p.clock)
    const def = check.readably('schedule', () => {
      const d = defineSchedule(id, spec, type, payload, options, now)
      checkPostOptions(checkScheduleOptions(options), false)
      return d
    })
    this.#p.registry.resolve(type)
    this.#p.registry.checkPayload(type, payload)
    if (nextFire(def.spec, def.anchor, now) === undefined) {
      throw new InvalidArgumentError('spec', 'a schedule with a due time after now (its window or limit is over)', spec)
    }
    return def
  }

  /** Removes schedule `id`: its next fire is cancelled. False when there is none. */
  remove(id: string): boolean {
    this.#p.hooks.refuseIfStopping('remove a schedule')
    if (this.#p.hooks.awaitingRecovery()) this.#removed.add(id) // the journal may hold it: removed at recovery
    const retrying = this.#retrying.delete(id)
    const deferred = this.#deferred.delete(id)
    const held = this.#held(id)
    if (held === undefined) return deferred || retrying
    this.#p.cancel(held.m, `schedule ${JSON.stringify(id)} was removed`)
    return true
  }

  /** Pauses schedule `id` (durably: its state waits in a message that never fires). False when unknown. */
  pause(id: string): boolean {
    this.#p.hooks.refuseIfStopping('pause a schedule')
    const held = this.#held(id)
    if (held === undefined) return this.#deferred.has(id) && this.#setDeferredPause(id, true)
    if (held.state.paused !== true) this.#post(held.def, { ...held.state, paused: true }, held.m)
    return true
  }

  /** Resumes schedule `id` from now. False when unknown. */
  resume(id: string): boolean {
    this.#p.hooks.refuseIfStopping('resume a schedule')
    const held = this.#held(id)
    if (held === undefined) return this.#deferred.has(id) && this.#setDeferredPause(id, false)
    if (held.state.paused === true) this.#replace(held.def, held, held.state.runs)
    return true
  }

  /** Schedule `id`, if there is one. */
  get(id: string): ScheduleInfo | undefined {
    const held = this.#held(id)
    if (held !== undefined) {
      const { state } = held
      return infoOf(held.def, state.runs, state.paused === true ? undefined : state.nominalEpochMs, state.paused)
    }
    const def = this.#deferred.get(id)
    return def === undefined ? undefined : infoOf(def, 0, undefined, def.paused)
  }

  /** Every schedule, by id. */
  list(): ScheduleInfo[] {
    const ids = new Set([...this.#p.extras.scheduleIds(), ...this.#deferred.keys()])
    return [...ids].sort().flatMap((id) => this.get(id) ?? []) // one whose last fire runs is gone
  }

  /**
   * A delayed message came due: if it carries a schedule, it is that schedule's fire, and the next
   * fire is posted now (or the schedule ends: its limit, its end).
   */
  cameDue(m: Envelope): void {
    const state = this.#p.extras.scheduleOf(m)
    // Paused, or not the schedule's holder any more (a restore brought another): no next fire.
    if (state === undefined || state.paused === true || this.#p.extras.scheduleCarrier(state.id) !== m) return
    const def = this.#definitions.of(m, state)
    const runs = state.runs + 1
    if (def.spec.spec.limit !== undefined && runs >= def.spec.spec.limit) return
    // After its due time (a short delay — a busy event loop, a jitter — skips no due time), or after now
    // when it came due more than a minute late (a process frozen that long does not catch up).
    const now = wallNow(this.#p.clock)
    const late = now - state.nominalEpochMs - (def.spec.spec.jitterMs ?? 0) > CATCH_UP_MS
    const after = late ? now : state.nominalEpochMs
    const next = nextFire(def.spec, def.anchor, after)
    if (next !== undefined) this.#continue(def, { ...state, runs, nominalEpochMs: next }, m)
  }

  // Posts the next fire; while the loop refuses it (a failing journal, `maxDelayed` reached) the fire
  // that came due keeps holding the schedule, and the post is tried again every second.
  #continue(def: Definition, state: ScheduleState, fire: Envelope): void {
    try {
      this.#post(def, state, undefined, false, true)
      this.#retrying.delete(def.id)
    } catch (error) {
      this.#p.hooks.refused(def.id, error)
      this.#retrying.set(def.id, fire)
      this.#p.hooks.later(() => {
        const holder = this.#p.extras.scheduleCarrier(def.id)
        if (this.#retrying.get(def.id) === fire && (holder === undefined || holder === fire)) {
          this.#continue(def, state, fire)
        }
      })
    }
  }

  /**
   * After a restore or the journal's recovery: each schedule's recovered next fire meets the upsert the
   * code made before `start()`, and the fires missed while no process ran it follow its policy.
   */
  reconcile(): void {
    const now = wallNow(this.#p.clock)
    for (const id of new Set([...this.#p.extras.scheduleIds(), ...this.#deferred.keys(), ...this.#removed])) {
      const held = this.#held(id)
      if (held !== undefined && this.#own.has(held.m) && !this.#deferred.has(id)) continue // not restored
      const def = this.#deferred.get(id) ?? held?.def
      this.#deferred.delete(id)
      if (this.#removed.delete(id)) this.#cancel(held, id)
      else if (def !== undefined) this.#reconcile(id, def, held, now)
    }
  }

  // One schedule after a restore: the code's upsert (`def`) meets the next fire it brought (`held`).
  #reconcile(id: string, def: Definition, held: Held | undefined, now: number): void {
    {
      if (held === undefined) {
        this.#replace({ ...def, paused: false }, undefined, 0, def.paused)
        return
      }
      const { state } = held
      const same = sameDefinition(held.def, def)
      const missed = state.paused !== true && state.nominalEpochMs <= now
      if (!missed && same && def.paused !== true) {
        this.#own.add(held.m)
        return
      }
      const paused = state.paused === true || def.paused === true
      this.#replace(same ? held.def : def, held, state.runs, paused, missed ? state.nominalEpochMs : undefined)
    }
  }

  // The schedule's next fire replaces `held` (cancelled): fires it missed since `missedFrom` first.
  #replace(def: Definition, held: Held | undefined, runs: number, paused = false, missedFrom?: number): void {
    const now = wallNow(this.#p.clock)
    const missed = missedFrom === undefined ? [] : this.#missed(def, missedFrom, now, runs)
    const count = runs + missed.length
    const { limit } = def.spec.spec
    const next = paused ? now : limit !== undefined && count >= limit ? undefined : nextFire(def.spec, def.anchor, now)
    // The message it replaces goes first when a fire about to be posted takes its idempotency key; else
    // last, so a refused post leaves the schedule as it was.
    const first = missed.length > 0 || (held !== undefined && held.state.nominalEpochMs === next)
    if (first) this.#cancel(held, def.id)
    for (const [i, at] of missed.entries()) this.#post(def, stateOf(def, runs + i, at), undefined, true)
    if (next !== undefined)
      this.#post(def, { ...stateOf(def, count, next), ...(paused && { paused: true }) }, undefined)
    if (!first) this.#cancel(held, def.id)
  }

  #cancel(held: Held | undefined, id: string): void {
    if (held !== undefined && isWaiting(held.m)) this.#p.cancel(held.m, `schedule ${id} was replaced or removed`)
  }

  // The fires a restart missed that its policy runs, oldest first.
  #missed(def: Definition, from: number, now: number, runs: number): number[] {
    const { missed: policy = 'run-once', limit } = def.spec.spec
    const n = Math.min(policy === 'skip' ? 0 : policy === 'run-once' ? 1 : policy.backfill, (limit ?? Infinity) - runs)
    return n <= 0 ? [] : missedFires(def.spec, def.anchor, from, now, n)
  }

  // Posts the message of a fire (`now`: a missed one, due at once) carrying `state`; `replaces` is cancelled.
  #post(def: Definition, state: ScheduleState, replaces: Envelope | undefined, now = false, internal = false): void {
    const { clock, admission, extras } = this.#p
    const at = new Date(state.nominalEpochMs).toISOString()
    const headers = { ...def.options.headers, 'flowing-schedule': def.id, 'flowing-fire-at': at }
    const options: PostOptions = { ...def.options, headers }
    if (state.paused !== true) (options as { idempotencyKey?: string }).idempotencyKey = `schedule:${def.id}@${at}`
    const jitter = now || state.paused === true ? 0 : Math.random() * (def.spec.spec.jitterMs ?? 0)
    const wait = state.paused === true ? PAUSED_MS : Math.max(0, state.nominalEpochMs + jitter - wallNow(clock))
    const handle = admission.schedule(def.type, def.payload, clock.now() + wait, options, internal)
    if (!now) extras.bindSchedule(handle.message as unknown as Envelope, state)
    if (!now) this.#own.add(handle.message as unknown as Envelope)
    if (replaces !== undefined && isWaiting(replaces))
      this.#p.cancel(replaces, `schedule ${JSON.stringify(def.id)} was paused`)
  }

  // The waiting (or running) message that holds schedule `id`, with its state and definition.
  #held(id: string): Held | undefined {
    const m = this.#p.extras.scheduleCarrier(id)
    const state = m === undefined ? undefined : this.#p.extras.scheduleOf(m)
    if (m === undefined || state === undefined || !isWaiting(m)) return undefined
    return { m, state, def: this.#definitions.of(m, state) }
  }

  #setDeferredPause(id: string, paused: boolean): boolean {
    const def = this.#deferred.get(id) as Definition
    this.#deferred.set(id, { ...def, paused })
    return true
  }
}
