/**
 * Recurring schedules across processes. A schedule's definition and its next due time live in the KV
 * bucket `<name>-schedules` (one entry per id, written with compare-and-set); its next fire waits in the
 * delayed stream like any delayed message (a *carrier*: id and message id `schedule:<id>@<due time>`,
 * so the processes that publish it at once store it once). The process that moves a due carrier:
 *
 * ```
 *  carrier due ─▶ entry's next is this due time? ─ no ─▶ drop it (removed, paused, replaced, or moved
 *                 │ yes                                  by another process: whose next carrier exists)
 *                 ▼
 *  publish the fire (message id `<carrier id>@due`: a second mover's copy is dropped by the server)
 *  ─▶ advance the entry (CAS; a process that loses the race stops here) ─▶ publish the next carrier
 *  ─▶ acknowledge the carrier
 * ```
 *
 * A process that dies anywhere in between leaves the carrier unacknowledged: another process moves it
 * again, and every step repeats without a second fire (the fire's message id, its idempotency key).
 * A carrier moved more than a minute late was due while no process ran: the schedule's `missed` policy
 * says which of the due times since then fire.
 *
 * @module
 */
import {
  type Clock,
  defineSchedule,
  missedFires,
  nextFire,
  type ScheduleDefinition,
  type ScheduleOptions,
  type ScheduleSpec,
  wallNow,
} from '@flowing/core'
import { type KV, Kvm } from '@nats-io/kv'
import type { NatsConnection } from '@nats-io/transport-node'
import { type Wire, wireOf } from './codec.js'

/** Later than this, a carrier was due while no process ran: its schedule's `missed` policy applies. */
export const MISSED_AFTER_MS = 60_000

/** A schedule as the KV bucket keeps it. */
export interface Entry {
  readonly def: {
    readonly spec: ScheduleSpec
    readonly type: string
    readonly payload: unknown
    readonly options: ScheduleOptions
    readonly anchor?: number
  }
  /** The due time of its next fire (ms since the epoch); null when it has none left. */
  readonly next: number | null
  readonly runs: number
  readonly paused?: boolean
}

/** Where the keeper publishes: fires into their partitions, carriers into the delayed stream. */
export interface SchedulePublishing {
  fire(w: Wire): Promise<unknown>
  carrier(w: Wire): Promise<unknown>
}

/** The schedules of one NATS loop: its KV bucket and its carriers. */
export class ScheduleKeeper {
  readonly #kv: KV
  readonly #clock: Clock
  readonly #publish: SchedulePublishing

  constructor(kv: KV, clock: Clock, publish: SchedulePublishing) {
    this.#kv = kv
    this.#clock = clock
    this.#publish = publish
  }

  /** Opens (or creates) the loop's schedule bucket. */
  static bucket(nc: NatsConnection, name: string, replicas: number): Promise<KV> {
    return new Kvm(nc).create(`${name}-schedules`, { history: 1, replicas })
  }

  /** The bucket's entry of `id` (undefined: none). */
  async read(id: string): Promise<{ entry: Entry; revision: number } | undefined> {
    const e = await this.#kv.get(keyOf(id))
    return e === null || e.operation !== 'PUT' ? undefined : { entry: e.json<Entry>(), revision: e.revision }
  }

  /** Every schedule's id and entry. */
  async all(): Promise<{ id: string; entry: Entry }[]> {
    const out: { id: string; entry: Entry }[] = []
    for await (const key of await this.#kv.keys()) {
      const found = await this.read(idOf(key))
      if (found !== undefined) out.push({ id: idOf(key), entry: found.entry })
    }
    return out.sort((a, b) => (a.id < b.id ? -1 : 1))
  }

  /**
   * Writes `entry` over `revision` (0: a new entry); false when another process wrote first. The
   * carrier of its next fire is published after (the same one from every process: stored once).
   */
  async write(id: string, entry: Entry, revision: number): Promise<boolean> {
    try {
      if (revision === 0) await this.#kv.create(keyOf(id), JSON.stringify(entry))
      else await this.#kv.update(keyOf(id), JSON.stringify(entry), revision)
    } catch (error) {
      if (isConflict(error)) return false
      throw error
    }
    if (entry.next !== null && entry.paused !== true)
      await this.#publish.carrier(this.#wire(id, entry, entry.next, true))
    return true
  }

  /** Removes schedule `id`; false when there was none. */
  async remove(id: string): Promise<boolean> {
    if ((await this.read(id)) === undefined) return false
    await this.#kv.delete(keyOf(id))
    return true
  }

  /** A carrier came due (see the module): resolves once it may be acknowledged. */
  async due(w: Wire): Promise<void> {
    const id = w.headers['flowing-schedule'] as string
    const nominal = Date.parse(w.headers['flowing-fire-at'] as string)
    const found = await this.read(id)
    if (found === undefined) return // removed
    const { entry, revision } = found
    if (entry.paused === true || entry.next !== nominal) {
      // Paused, replaced, or moved on by another process: make sure its current carrier exists (published
      // again, stored once: its message id), without writing the entry (a write would fail the CAS of
      // the process moving the current one).
      if (entry.paused !== true && entry.next !== null && entry.next > nominal) await this.republish(id)
      return
    }
    const def = definitionOf(id, entry)
    const now = wallNow(this.#clock)
    // Late past its jittered due time by more than a minute: due while no process ran.
    const late = now - (w.dueAtEpochMs ?? nominal) > MISSED_AFTER_MS
    const times = late ? this.#missed(def, nominal, now, entry.runs) : [nominal]
    for (const at of times) await this.#publish.fire(this.#wire(id, entry, at, false))
    const runs = entry.runs + times.length
    const { limit } = def.spec.spec
    // After its due time: the due times a short delay passed (a process that died holding it) fire at once,
    // one by one; after a long one the missed policy ran, and the next is the first after now.
    const after = late ? now : nominal
    const next = limit !== undefined && runs >= limit ? undefined : nextFire(def.spec, def.anchor, after)
    if (next === undefined) await this.#kv.delete(keyOf(id), { previousSeq: revision }).catch(ignoreConflict)
    else await this.write(id, { ...entry, next, runs }, revision)
  }

  #missed(def: ScheduleDefinition, from: number, now: number, runs: number): number[] {
    const { missed: policy = 'run-once', limit } = def.spec.spec
    const n = Math.min(policy === 'skip' ? 0 : policy === 'run-once' ? 1 : policy.backfill, (limit ?? Infinity) - runs)
    return n <= 0 ? [] : missedFires(def.spec, def.anchor, from, now, n)
  }

  /** Publishes the carrier of schedule `id`'s next fire again (stored once: its message id). */
  async republish(id: string): Promise<void> {
    const found = await this.read(id)
    const entry = found?.entry
    if (entry !== undefined && entry.next !== null && entry.paused !== true) {
      await this.#publish.carrier(this.#wire(id, entry, entry.next, true))
    }
  }

  // A fire of schedule `id` due at `at`: its carrier (`delayed`) or the fire itself.
  #wire(id: string, entry: Entry, at: number, delayed: boolean): Wire {
    const { type, payload, options } = entry.def
    const iso = new Date(at).toISOString()
    const fireId = `schedule:${id}@${iso}`
    const headers = { ...options.headers, 'flowing-schedule': id, 'flowing-fire-at': iso }
    const { group: _, ...post } = options
    const w = wireOf(fireId, type, payload, { ...post, headers, idempotencyKey: fireId }, undefined, [], this.#clock)
    if (!delayed) return w
    const jitter = Math.random() * (entry.def.spec.jitterMs ?? 0)
    return { ...w, dueAtEpochMs: at + jitter }
  }
}

/** A schedule's definition as the bucket keeps it, checked again. */
export function definitionOf(id: string, entry: Entry): ScheduleDefinition {
  const { spec, type, payload, options, anchor } = entry.def
  return defineSchedule(id, spec, type, payload, options, entry.next ?? 0, anchor)
}

// KV keys allow letters, digits, `-`, `_`, `=`, `.`, `/`: anything else in an id is hex-escaped.
function keyOf(id: string): string {
  return `s.${Buffer.from(id, 'utf8').toString('hex')}`
}

function idOf(key: string): string {
  return Buffer.from(key.slice(2), 'hex').toString('utf8')
}

function isConflict(error: unknown): boolean {
  const text = String((error as { message?: unknown })?.message ?? error)
  return /wrong last sequence|key exists|10071/i.test(text)
}

function ignoreConflict(error: unknown): void {
  if (!isConflict(error)) throw error
}
