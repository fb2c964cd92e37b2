/**
 * The state an {@link Attempt} shares with its watchdog: where deadlines go, the clock, the defaults
 * and the counters. A plain class with public fields so the hot path (guard, done) is field writes.
 */
import type { Attempt, TimeoutHandler, ZombieHandler } from '../attempt.js'
import type { DeadlineScheduler } from '../deadline-scheduler.js'

export class WatchdogCore {
  // Set once by the Watchdog constructor (its own driver may need `this` to exist first).
  scheduler!: DeadlineScheduler<Attempt>
  constructor(
    readonly now: () => number,
    readonly graceMs: number,
    readonly onTimeout: TimeoutHandler | undefined,
    readonly onZombie: ZombieHandler | undefined,
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
  readonly zombies = new Set<Attempt>()
}
