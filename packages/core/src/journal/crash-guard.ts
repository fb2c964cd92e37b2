/**
 * The crash-loop guard of a journaled loop: a message whose attempts keep ending in a crash of the
 * process is dead-lettered instead of taking the process down at every start — and a message that
 * merely ran beside it is not.
 *
 * ```text
 *  handler entered ─▶ its row says `running` at the next commit ─▶ … ─▶ attempt ended: row updated
 *  crash ─▶ recovery: each row still `running` counts one more crash ─▶ restored with `crashes`
 *  next start ─▶ crashes ≥ maxCrashes ─▶ CrashLoopError (never retried: a dead letter)
 *              ─▶ crashes > 0 (a suspect) ─▶ runs alone: nothing else in a handler meanwhile
 *              ─▶ restored ─▶ runs once its `running` row is committed
 * ```
 *
 * A crash interrupts every attempt in a handler at that moment, so each of them counts it. A suspect
 * then runs alone — after the others' ends are committed, before anything else enters a handler — so
 * a crash during its run is its own: an innocent bystander finishes its solo run and is done, while a
 * poison message climbs to `maxCrashes`. A restored message's attempt waits for its start to be
 * committed, so a handler that kills its process at once is still counted. A message that never
 * crashed is marked lazily (in the batch of the turn its handler was entered): one that kills its
 * process within that first commit is counted from its next start on.
 *
 * @module
 */
import type { AbortSignalLike } from '@flowing/watchdog'
import type { Clock, TimerHandle } from '../contracts/clock.js'
import { CrashLoopError } from '../errors.js'
import type { Envelope } from '../internal/envelope.js'
import type { PostExtras } from '../internal/post-extras.js'

// A gated start whose commit failed waits this long before it asks again (the journal retries it).
const RECHECK_MS = 50
/**
 * How long a suspect waits for the handlers running beside it to end, and then holds new ones back while
 * it runs: a crash within it is the suspect's own. Bounded, so a hung handler or a long suspect stalls
 * the loop for at most this long (a crash later in the suspect's run counts for whoever runs then).
 */
export const SOLO_MS = 2_000

/** What the guard reads of an attempt: its signal, read only when the attempt has to wait. */
interface Waiting {
  readonly signal: AbortSignalLike
}

/** What the guard reads and writes. */
export interface CrashGuardParts {
  readonly journal: { touch(m: Envelope): void; flushed(soon: boolean): Promise<void> }
  readonly extras: PostExtras
  /** The limit for a type: its own `maxCrashes`, else the loop's. */
  maxCrashesFor(type: string): number
  readonly clock: Clock
}

/** Counts, per journaled message, the attempts crashes interrupted, and stops a crash loop. */
export class CrashGuard {
  readonly #p: CrashGuardParts
  // Messages whose handler runs now: their rows say `running`.
  readonly #inHandler = new Set<Envelope>()
  // The suspect that runs (or is about to run) alone, if any, and the end of its solo window.
  #solo: Envelope | undefined
  #soloTimer: TimerHandle | undefined
  // Restored messages came back: nothing enters a handler until the batch that rewrote their rows (the
  // crashes counted, the old `running` rows gone) is committed — a crash before it counts nothing twice.
  #recovering = false
  // Attempts waiting for their turn: woken at each change.
  #waiters: (() => void)[] = []

  /** @param parts - the journal, the side table, the limits */
  constructor(parts: CrashGuardParts) {
    this.#p = parts
  }

  /** Whether the handler of `m` runs now (its row says `running`). */
  running(m: Envelope): boolean {
    return this.#inHandler.has(m)
  }

  /** `m` came back from a journal or a snapshot, `crashes` of its attempts interrupted. */
  restored(m: Envelope, crashes: number | undefined): void {
    this.#p.extras.restoredWith(m, crashes)
    this.#recovering = true
  }

  /**
   * Before the handler of `m` runs (its attempt has begun): `undefined` to run it now; else a promise
   * that resolves when it may run, or rejects with a `CrashLoopError` when it must not run again.
   * @param attempt - the attempt: an abort of its signal (a deadline, a stop's cut-off) ends the wait
   */
  beforeRun(m: Envelope, attempt: Waiting): Promise<void> | undefined {
    const { extras } = this.#p
    const crashes = extras.crashesOf(m) ?? 0
    const gated = extras.takeGate(m) || this.#recovering
    if (!gated && crashes === 0 && this.#solo === undefined) {
      this.#enter(m)
      return undefined
    }
    const max = this.#p.maxCrashesFor(m.type)
    if (crashes >= max) return Promise.reject(new CrashLoopError(m.type, crashes, max))
    if (max === Number.POSITIVE_INFINITY && this.#solo === undefined) {
      this.#enter(m) // no guard for its type: nothing to wait for
      return undefined
    }
    return this.#admit(m, crashes > 0, attempt.signal)
  }

  /** The attempt of `m` ended (or never ran its handler): its row no longer says `running`. */
  ended(m: Envelope): void {
    const was = this.#inHandler.delete(m)
    if (this.#solo === m) this.#endSolo()
    if (was) this.#p.journal.touch(m)
    if (this.#waiters.length > 0) this.#wake()
  }

  // A suspect takes the solo, waits (at most SOLO_MS) until nothing else is in a handler, and holds new
  // entries back for at most SOLO_MS of its run; anyone else waits while a solo holds. Then the
  // `running` rows (and the ends before them) are committed before the handler runs.
  async #admit(m: Envelope, suspect: boolean, signal: AbortSignalLike): Promise<void> {
    const free = () => this.#solo === undefined
    const enter = () => this.#enter(m)
    const entered = suspect
      ? (await this.#until(free, signal, () => this.#startSolo(m))) &&
        (await this.#until(() => this.#inHandler.size === 0 || this.#solo !== m, signal, enter))
      : await this.#until(free, signal, enter)
    if (!entered) return
    await this.#committed(signal)
    this.#recovering = false
  }

  // `m` holds the solo for SOLO_MS at most: waiting for the others, then running alone.
  #startSolo(m: Envelope): void {
    this.#solo = m
    this.#soloTimer = this.#p.clock.setTimeout(() => this.#endSolo(), SOLO_MS)
  }

  #endSolo(): void {
    if (this.#soloTimer !== undefined) this.#p.clock.clearTimeout(this.#soloTimer)
    this.#soloTimer = undefined
    this.#solo = undefined
    this.#wake()
  }

  #enter(m: Envelope): void {
    this.#inHandler.add(m)
    this.#p.journal.touch(m)
  }

  // Resolves true once `ready()` holds — and `then()` ran at once, in the same turn as that check (no
  // other waiter can slip between) — or false if `signal` aborted first (one abort listener per wait).
  async #until(ready: () => boolean, signal: AbortSignalLike, then: () => void): Promise<boolean> {
    if (signal.aborted) return false
    if (ready()) {
      then()
      return true
    }
    let wake = (): void => {}
    const onAbort = (): void => wake()
    signal.addEventListener('abort', onAbort, { once: true })
    try {
      while (!ready() && !signal.aborted) {
        await new Promise<void>((resolve) => {
          wake = resolve
          this.#waiters.push(resolve)
        })
      }
    } finally {
      signal.removeEventListener('abort', onAbort)
    }
    if (signal.aborted) return false
    then()
    return true
  }

  #wake(): void {
    const waiters = this.#waiters
    this.#waiters = []
    for (const resolve of waiters) resolve()
  }

  // Resolves once the journal committed what changed so far (the `running` row among it); a failed
  // commit is retried by the journal, and asked again until it lands or the attempt is aborted.
  async #committed(signal: AbortSignalLike): Promise<void> {
    for (;;) {
      try {
        await this.#p.journal.flushed(true) // at once: a start waits for it
        return
      } catch {
        if (signal.aborted) return
        await new Promise<void>((resolve) => this.#p.clock.setTimeout(resolve, RECHECK_MS))
      }
    }
  }
}
