/**
 * Per-post settings that most posts never use (`handlerTimeoutMs`, `retry`, `idempotencyKey`, the
 * `ctx.commit()` checkpoint), kept beside the envelope
 * so the envelope stays small and messages without them pay one boolean check.
 *
 * @module
 */
import type { AbortSignalLike } from '@flowing/watchdog'
import type { JobState } from '../contracts/jobs.js'
import type { PostOptions } from '../contracts/message.js'
import type { RetryOptions } from '../contracts/retry.js'
import type { ScheduleState } from '../contracts/schedules.js'
import type { Envelope } from './envelope.js'

interface Extras {
  timeoutMs: number | undefined
  group: string | undefined
  // The post's `signal` and the listener that cancels the message when it aborts.
  signal: AbortSignalLike | undefined
  onAbort: (() => void) | undefined
  retry: RetryOptions | undefined
  idempotencyKey: string | undefined
  // What the handler passed to ctx.commit() (`true` when it passed nothing); `undefined` until it commits.
  checkpoint: unknown
  // Its job key and, for a debounced burst with `maxWaitMs`, the latest time it may be due.
  job: JobState | undefined
  // The schedule whose next fire it is.
  schedule: ScheduleState | undefined
  // Attempts a crash interrupted (a journal's recovery counted them).
  crashes: number | undefined
  // Restored: its next attempt begins only once its start is in the journal (the crash-loop guard).
  gated: boolean
  // Its idempotency key's slot in the ledger's own table (-1: none known), so its end finds it at once.
  slot: number
}

/**
 * The rare per-post settings of live messages. A plain `Map` (a `WeakMap` costs twice as much per post
 * with many live entries): the loop calls {@link PostExtras.forget} at each message's outcome.
 */
export class PostExtras {
  readonly #extras = new Map<Envelope, Extras>()
  // The message each job key names: the last one posted with it, until its outcome.
  readonly #jobs = new Map<string, Envelope>()
  // The message holding each schedule: its next fire.
  readonly #schedules = new Map<string, Envelope>()
  #used = false
  // The last entry looked up, and its message: a start or an end reads several fields of one message
  // in a row (its deadline, group, key, checkpoint), which then costs one lookup, not one each.
  #lastM: Envelope | undefined = undefined
  #lastE: Extras | undefined = undefined

  /** Entries held (messages in flight that have one). */
  get size(): number {
    return this.#extras.size
  }

  /** `m` reached its outcome (or was refused): its entry goes. */
  forget(m: Envelope): void {
    if (this.#extras.size === 0) return
    const e = this.#find(m)
    if (e === undefined) return
    if (e.onAbort !== undefined) e.signal?.removeEventListener('abort', e.onAbort)
    if (e.job !== undefined && this.#jobs.get(e.job.key) === m) this.#jobs.delete(e.job.key)
    if (e.schedule !== undefined && this.#schedules.get(e.schedule.id) === m) this.#schedules.delete(e.schedule.id)
    this.#extras.delete(m)
    this.#lastM = this.#lastE = undefined
  }

  /** Keeps `options`' rare settings for `m`, if it has any. */
  keep(m: Envelope, options: PostOptions | undefined): void {
    if (options === undefined) return
    const { handlerTimeoutMs, retry, idempotencyKey, group } = options
    if (handlerTimeoutMs === undefined && retry === undefined && idempotencyKey === undefined && group === undefined)
      return
    const e = this.#entry(m)
    e.timeoutMs = handlerTimeoutMs
    e.retry = retry
    e.idempotencyKey = idempotencyKey
    e.group = group
  }

  /** Gives `m` the job key `job.key`: it names `m` from now on. */
  bindJob(m: Envelope, job: JobState): void {
    this.#entry(m).job = job
    this.#jobs.set(job.key, m)
  }

  /** The message job key `key` names (waiting, or running), if any. */
  jobNamed(key: string): Envelope | undefined {
    return this.#jobs.get(key)
  }

  /** The job key of `m` and its debounce limit, if it has one. */
  jobOf(m: Envelope): JobState | undefined {
    return this.#find(m)?.job
  }

  /** Makes `m` the holder of schedule `state.id` (its next fire). */
  bindSchedule(m: Envelope, state: ScheduleState): void {
    this.#entry(m).schedule = state
    this.#schedules.set(state.id, m)
  }

  /** The schedule `m` holds, if any. */
  scheduleOf(m: Envelope): ScheduleState | undefined {
    return this.#find(m)?.schedule
  }

  /** The message holding schedule `id`, if any. */
  scheduleCarrier(id: string): Envelope | undefined {
    return this.#schedules.get(id)
  }

  /** The ids of the schedules held now. */
  scheduleIds(): IterableIterator<string> {
    return this.#schedules.keys()
  }

  /** Every job key in use, with the message it names (for `loop.jobs.list()`). */
  jobEntries(): IterableIterator<[string, Envelope]> {
    return this.#jobs.entries()
  }

  /** Job keys in use. */
  get jobs(): number {
    return this.#jobs.size
  }

  /** Cancels `m` through `cancel` when `signal` aborts (until `m`'s outcome forgets it). */
  watch(m: Envelope, signal: AbortSignalLike, cancel: (m: Envelope) => void): void {
    const e = this.#entry(m)
    e.signal = signal
    e.onAbort = () => cancel(m)
    signal.addEventListener('abort', e.onAbort, { once: true })
  }

  /**
   * `m` was restored (from a journal or a snapshot) with `crashes` interrupted attempts: kept, and its
   * next attempt is gated (see `CrashGuard`).
   */
  restoredWith(m: Envelope, crashes: number | undefined): void {
    const e = this.#entry(m)
    e.crashes = crashes
    e.gated = true
  }

  /** Whether `m`'s next attempt waits for its start to be journaled; ungates it (one attempt is gated). */
  takeGate(m: Envelope): boolean {
    const e = this.#find(m)
    if (e === undefined || !e.gated) return false
    e.gated = false
    return true
  }

  /** Attempts of `m` that crashes interrupted, if any were counted. */
  crashesOf(m: Envelope): number | undefined {
    return this.#find(m)?.crashes
  }

  /** The key group given at post, if any. */
  groupOf(m: Envelope): string | undefined {
    return this.#find(m)?.group
  }

  /** Records a commit point of `m` (`ctx.commit(checkpoint)`; `undefined` is recorded as `true`). */
  commit(m: Envelope, checkpoint: unknown): void {
    this.#entry(m).checkpoint = checkpoint === undefined ? true : checkpoint
  }

  /** The checkpoint of `m`'s last commit, or `undefined` when its handler never committed. */
  checkpointOf(m: Envelope): unknown {
    return this.#find(m)?.checkpoint
  }

  /** The idempotency key given at post (or restored), if any. */
  idempotencyKeyOf(m: Envelope): string | undefined {
    return this.#find(m)?.idempotencyKey
  }

  /** Keeps where the ledger's own table holds `m`'s key — if `m` has an entry (its key came with the post). */
  keepSlot(m: Envelope, slot: number): void {
    const e = this.#find(m)
    if (e !== undefined) e.slot = slot
  }

  /** Where the ledger's own table holds `m`'s key, as kept (-1: not kept). */
  slotOf(m: Envelope): number {
    return this.#find(m)?.slot ?? -1
  }

  /** The per-post handler deadline of `m`, if any. */
  timeoutOf(m: Envelope): number | undefined {
    return this.#find(m)?.timeoutMs
  }

  /** The per-post retry policy of `m`, if any. */
  retryOf(m: Envelope): RetryOptions | undefined {
    return this.#find(m)?.retry
  }

  // The entry of `m`, if it has one (no lookup until some message had one).
  #find(m: Envelope): Extras | undefined {
    if (!this.#used) return undefined
    if (this.#lastM === m) return this.#lastE
    const e = this.#extras.get(m)
    this.#lastM = m
    this.#lastE = e
    return e
  }

  #entry(m: Envelope): Extras {
    this.#used = true
    let e = this.#find(m)
    if (e === undefined) {
      e = {
        timeoutMs: undefined,
        group: undefined,
        signal: undefined,
        onAbort: undefined,
        retry: undefined,
        idempotencyKey: undefined,
        checkpoint: undefined,
        job: undefined,
        schedule: undefined,
        crashes: undefined,
        gated: false,
        slot: -1,
      }
      this.#extras.set(m, e)
      this.#lastE = e
    }
    return e
  }
}
