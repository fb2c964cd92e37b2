/**
 * The state an attempt shares with its watchdog: where deadlines go, the clock, the defaults and the
 * counters. A plain class with public fields so the hot path (guard, done) is field writes.
 *
 * Generic over the attempt type `A` (always `Attempt`) so that this module needs nothing from
 * `attempt.ts`, which needs it: no import cycle, not even a type-only one.
 */
import type { DeadlineScheduler } from '../deadline-scheduler.js'
import type { HandlerTimeoutError } from '../errors.js'

export class WatchdogCore<A> {
  // Set once by the Watchdog constructor (its own driver may need `this` to exist first).
  scheduler!: DeadlineScheduler<A>
  constructor(
    readonly now: () => number,
    readonly graceMs: number,
    // `TimeoutHandler` and `ZombieHandler` with `A` for `Attempt`.
    readonly onTimeout: ((attempt: A, error: HandlerTimeoutError) => void) | undefined,
    readonly onZombie:
      | ((zombie: {
          readonly epoch: number
          readonly label: string
          readonly ageMs: number
          readonly attempt: A
        }) => void)
      | undefined,
  ) {}
  nextEpoch = 1
  running = 0
  guarded = 0
  completed = 0
  failed = 0
  timedOut = 0
  cancelled = 0
  lateCompletions = 0
  fencedEffects = 0
  zombiesTotal = 0
  // Insertion order is zombie order (oldest timeout first); a Set makes late removal O(1).
  readonly zombies = new Set<A>()
}
