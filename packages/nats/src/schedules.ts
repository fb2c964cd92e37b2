/**
 * `natsLoop.schedules`: recurring messages shared by every process of a NATS loop, each due time fired
 * once among them.
 *
 * @module
 */
import {
  type Clock,
  defineSchedule,
  InvalidArgumentError,
  nextFire,
  type ScheduleInfo,
  type ScheduleOptions,
  type ScheduleSpec,
  sameDefinition,
  wallNow,
} from '@flowing/core'
import { argumentChecks } from '@flowing/errors'
import { checkPost } from './internal/post-input.js'
import { definitionOf, type Entry, type ScheduleKeeper } from './internal/schedule-keeper.js'

const check = argumentChecks(InvalidArgumentError)

// Compare-and-set rounds before an upsert gives up (only a storm of concurrent writers gets there).
const ROUNDS = 16

/**
 * Recurring schedules of a NATS loop (the same `spec` as `loop.schedule()` of `@flowing/core`). The
 * schedule is kept in the KV bucket `<name>-schedules` and its next fire in the delayed stream, so it
 * survives every process; the processes that share the loop fire each due time **once** among them,
 * and one that dies at a fire time does not lose it. Calling `upsert` with the same definition from
 * every process at start changes nothing. A fire moved more than a minute after its due time was due
 * while no process ran: the schedule's `missed` policy applies. Fires take no key `group`.
 *
 * @example
 * ```ts no-run
 * await loop.schedules.upsert('nightly', { cron: '30 2 * * *', tz: 'Europe/Berlin' }, 'report.build', {})
 * ```
 *
 * @group NATS loop
 */
export class NatsSchedules {
  readonly #keeper: ScheduleKeeper
  readonly #clock: Clock
  readonly #refuseIfStopped: (action: string) => void

  /** @internal Use `natsLoop.schedules`. */
  constructor(keeper: ScheduleKeeper, clock: Clock, refuseIfStopped: (action: string) => void) {
    this.#keeper = keeper
    this.#clock = clock
    this.#refuseIfStopped = refuseIfStopped
  }

  /**
   * Creates schedule `id`, or replaces it (its next fire recomputed; the old one is dropped when due).
   * @throws InvalidArgumentError for a bad spec, option or id, as `loop.schedule()`; nothing is written
   */
  async upsert(
    id: string,
    spec: ScheduleSpec,
    type: string,
    payload: unknown,
    options?: ScheduleOptions,
  ): Promise<ScheduleInfo> {
    this.#refuseIfStopped('schedule')
    const def = check.readably('schedule', () => defineSchedule(id, spec, type, payload, options, wallNow(this.#clock)))
    if (def.options.group !== undefined) {
      throw new InvalidArgumentError('options.group', 'absent (a NATS loop has no key groups)', def.options.group)
    }
    checkPost(type, def.options)
    if (nextFire(def.spec, def.anchor, wallNow(this.#clock)) === undefined) {
      throw new InvalidArgumentError('spec', 'a schedule with a due time after now (its window or limit is over)', spec)
    }
    const written = this.#rounds(id, (found) => {
      const same = found !== undefined && sameDefinition(definitionOf(id, found), def)
      if (same) return undefined // a paused one stays paused
      const anchor = same ? found?.def.anchor : def.anchor
      const next = nextFire(def.spec, anchor, wallNow(this.#clock)) ?? null
      const { options } = def
      const d = { spec: def.spec.spec, type, payload, options, ...(anchor === undefined ? {} : { anchor }) }
      return { def: d, next, runs: found?.runs ?? 0 }
    })
    const info = (await written) as ScheduleInfo // an entry is there: written, or the same one
    await this.#keeper.republish(id) // the same one: its next fire again, in case an earlier publish failed
    return info
  }

  /** Pauses schedule `id` (its pending fire is dropped when due); false when there is none. */
  async pause(id: string): Promise<boolean> {
    this.#refuseIfStopped('pause a schedule')
    const info = await this.#rounds(id, (found) =>
      found === undefined || found.paused === true ? undefined : { ...found, paused: true },
    )
    return info !== undefined
  }

  /** Resumes schedule `id` from now; false when there is none. */
  async resume(id: string): Promise<boolean> {
    this.#refuseIfStopped('resume a schedule')
    const info = await this.#rounds(id, (found) => {
      if (found === undefined || found.paused !== true) return undefined
      const def = definitionOf(id, found)
      return { ...found, paused: false, next: nextFire(def.spec, def.anchor, wallNow(this.#clock)) ?? null }
    })
    return info !== undefined
  }

  /** Removes schedule `id`; false when there is none. */
  remove(id: string): Promise<boolean> {
    this.#refuseIfStopped('remove a schedule')
    return this.#keeper.remove(id)
  }

  /** Schedule `id`, if there is one. */
  async get(id: string): Promise<ScheduleInfo | undefined> {
    const found = await this.#keeper.read(id)
    return found === undefined ? undefined : infoOf(id, found.entry)
  }

  /** Every schedule, by id. */
  async list(): Promise<ScheduleInfo[]> {
    return (await this.#keeper.all()).map(({ id, entry }) => infoOf(id, entry))
  }

  // Reads the entry, asks `change` what to write (undefined: nothing), writes it with compare-and-set.
  async #rounds(
    id: string,
    change: (found: Entry | undefined) => Entry | undefined,
  ): Promise<ScheduleInfo | undefined> {
    for (let round = 0; round < ROUNDS; round++) {
      const found = await this.#keeper.read(id)
      const entry = change(found?.entry)
      if (entry === undefined) return found === undefined ? undefined : infoOf(id, found.entry)
      if (await this.#keeper.write(id, entry, found?.revision ?? 0)) return infoOf(id, entry)
    }
    throw new Error(`Flowing: schedule ${JSON.stringify(id)} changed ${ROUNDS} times while it was being written`)
  }
}

function infoOf(id: string, entry: Entry): ScheduleInfo {
  const { spec, type, payload, options } = entry.def
  const paused = entry.paused === true
  return {
    id,
    type,
    payload,
    spec,
    options,
    runs: entry.runs,
    paused,
    nextAt: paused ? undefined : (entry.next ?? undefined),
  }
}
