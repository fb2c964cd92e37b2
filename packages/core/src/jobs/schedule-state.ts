/**
 * A schedule between two fires: the state its next fire carries, the definition read back from it (its
 * spec checked once per spec object), and what `loop.schedules` reports.
 *
 * @module
 */
import type { ScheduleInfo, ScheduleState } from '../contracts/schedules.js'
import type { Envelope } from '../internal/envelope.js'
import { type Definition, defineSchedule } from './schedule-definition.js'
import { checkSpec, type Timing } from './schedule-spec.js'

/** The message holding a schedule, its state and its definition. */
export interface Held {
  readonly m: Envelope
  readonly state: ScheduleState
  readonly def: Definition
}

/** Definitions read back from the states fires carry. */
export class Definitions {
  // Checked specs by the spec object each fire's state shares with the next.
  readonly #timings = new WeakMap<object, Timing>()

  /** The definition of the schedule `m` holds. */
  of(m: Envelope, state: ScheduleState): Definition {
    let timing = this.#timings.get(state.spec)
    if (timing === undefined) {
      timing = checkSpec(state.spec)
      this.#timings.set(state.spec, timing)
    }
    const { id, spec, options, nominalEpochMs, anchorEpochMs } = state
    return defineSchedule(id, spec, m.type, m.payload, options, nominalEpochMs, anchorEpochMs, timing)
  }
}

/** The state a fire of `def` due at `nominalEpochMs` carries, after `runs` fires. */
export function stateOf(def: Definition, runs: number, nominalEpochMs: number): ScheduleState {
  const s: { -readonly [K in keyof ScheduleState]: ScheduleState[K] } = {
    id: def.id,
    spec: def.spec.spec,
    runs,
    nominalEpochMs,
  }
  if (Object.keys(def.options).length > 0) s.options = def.options
  if (def.anchor !== undefined && def.spec.spec.startAt === undefined) s.anchorEpochMs = def.anchor
  return s
}

/** What `loop.schedules.get()` reports. */
export function infoOf(
  def: Definition,
  runs: number,
  nextAt: number | undefined,
  paused = def.paused === true,
): ScheduleInfo {
  const { id, type, payload, options } = def
  return { id, type, payload, spec: def.spec.spec, options, runs, paused, nextAt }
}
