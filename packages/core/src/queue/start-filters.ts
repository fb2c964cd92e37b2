import type { Envelope } from '../internal/envelope.js'
import type { KeyGroups } from './key-groups.js'

/** What the run queue asks before a message starts, besides its key. */
export interface QueueFilters {
  /** Key groups with a concurrency limit (the loop's `groups`). */
  readonly groups?: KeyGroups | undefined
  /** A breaker's hold, a rate limit. */
  readonly starts?: StartFilters
}

/**
 * What may keep a message from starting once the run queue picked it: its route's open circuit
 * breaker, then a rate limit. Given to the run queue at construction; each filter is set once, by the
 * hold of its stage (`QueueHold`), once that stage is in use (a breaker or a rate rule configured or
 * registered) — until then the queue asks nothing (one property read per start).
 */
export class StartFilters {
  /** True holds `m` (its breaker is open; the filter keeps it, see `RunQueue.markHeld`). */
  hold: ((m: Envelope) => boolean) | undefined = undefined
  /** True when a rate limit makes `m` wait (see `RunQueue.markLimited`); false books its start. */
  limit: ((m: Envelope) => boolean) | undefined = undefined

  /** Sets the filter of `kind`, once: the first one stays. */
  set(kind: 'breaker' | 'limit', keeps: (m: Envelope) => boolean): void {
    if (kind === 'breaker') this.hold ??= keeps
    else this.limit ??= keeps
  }
}
