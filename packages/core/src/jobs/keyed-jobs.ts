/**
 * Keyed jobs: a post with a `jobKey` names its message by that key until the message's outcome, and
 * replaces the message waiting under the key — cancelled once the new one is accepted, never before,
 * so a refused post changes nothing (I7).
 *
 * ```
 *  post { jobKey } ─▶ plan (mode: the due time, the debounce limit) ─▶ admission ─▶ bind the key
 *                                                                                  └▶ cancel the old one
 * ```
 *
 * A message a job key names is *waiting* until it starts running: on the wheel, due behind its key,
 * held, rate-limited, backing off. A running one cannot be replaced: a post with its key is a new
 * message that takes the key over.
 *
 * @module
 */

import { type RefusalStatus, RefusedPost, refusalStatusOf } from '../admission/refusal.js'
import { wallNow } from '../clock.js'
import type { Clock } from '../contracts/clock.js'
import type { JobCancelResult, JobInfo, KeyedJob } from '../contracts/jobs.js'
import type { Message, MessageMap, PostOptions, PostResult } from '../contracts/message.js'
import { DelayedFullError, StoreError } from '../errors.js'
import { type Envelope, type Origin, Where } from '../internal/envelope.js'
import type { PostExtras } from '../internal/post-extras.js'
import type { DelayedMessage } from '../timers/delayed-posts.js'

/** What keyed jobs touch. */
export interface KeyedJobParts<M extends MessageMap> {
  readonly clock: Clock
  readonly extras: PostExtras
  readonly admission: {
    checkOptions(type: string, options: PostOptions | undefined): void
    post(type: string, payload: unknown, o: PostOptions, throws: boolean, from?: Origin): unknown
    schedule(type: string, payload: unknown, dueAt: number, o: PostOptions, from?: Origin): DelayedMessage<M>
  }
  /** Due times of delayed messages and of retries backing off. */
  readonly waits: { readonly delayed: Timed; readonly retries: Timed }
  /** Cancels a waiting message (its outcome `cancelled`). */
  cancel(m: Envelope, why: string): unknown
}

interface Timed {
  dueOf(m: Envelope): number | undefined
}

// A post's plan: when it is due (clock ms; undefined: at once) and its debounce limit (epoch ms).
interface Plan {
  readonly old: Envelope | undefined
  readonly due: number | undefined
  readonly untilEpochMs: number | undefined
}

/** The job keys of one loop. */
export class KeyedJobs<M extends MessageMap> {
  readonly #p: KeyedJobParts<M>

  constructor(parts: KeyedJobParts<M>) {
    this.#p = parts
  }

  /** `post` / `tryPost` / `ctx.post` with a job key (`options.jobKey` set). */
  post(type: string, payload: unknown, options: PostOptions, throws: boolean, from?: Origin): unknown {
    const plan = this.#plan(type, options, undefined)
    if (plan.due === undefined || plan.due <= this.#p.clock.now()) {
      const result = this.#p.admission.post(type, payload, options, throws, from)
      this.#took(throws ? result : (result as { message?: unknown }).message, options, plan)
      return result
    }
    // `preserve_run_at` over a delayed message, or a debounce limit: a post that waits.
    try {
      const handle = this.#p.admission.schedule(type, payload, plan.due, options, from)
      this.#took(handle.message, options, plan)
      const message = handle.message as Message<M>
      return throws ? message : ({ ok: true, status: 'queued', message } as PostResult<M, never>)
    } catch (error) {
      const status = statusOf(error)
      if (throws || status === undefined) throw error
      return new RefusedPost(status, () => error as Error)
    }
  }

  /** `postDelayed` / `postAt` with a job key, due at `dueAt` (clock ms) unless its mode says otherwise. */
  schedule(type: string, payload: unknown, dueAt: number, options: PostOptions): DelayedMessage<M> {
    const plan = this.#plan(type, options, dueAt)
    const handle = this.#p.admission.schedule(type, payload, plan.due ?? this.#p.clock.now(), options)
    this.#took(handle.message, options, plan)
    return handle
  }

  /** `loop.jobs.get()`. */
  get(key: string): JobInfo | undefined {
    const m = this.#waiting(key)
    return m === undefined ? undefined : this.#info(m)
  }

  /**
   * `loop.jobs.list()`: at most `limit` keyed messages that have not started, soonest due first (those
   * due now first), ties in post order. O(job keys × log job keys): for an inspection, not per message.
   */
  list(limit: number): KeyedJob[] {
    const found: { m: Envelope; jobKey: string; dueAt: number }[] = []
    for (const [jobKey, m] of this.#p.extras.jobEntries()) {
      if (isWaiting(m)) found.push({ m, jobKey, dueAt: this.#dueOf(m) ?? Number.NEGATIVE_INFINITY })
    }
    found.sort((a, b) => a.dueAt - b.dueAt || a.m.seq - b.m.seq)
    return found.slice(0, limit).map(({ m, jobKey }) => ({ ...this.#info(m), jobKey }))
  }

  #info(m: Envelope): JobInfo {
    const { delayed, retries } = this.#p.waits
    const info = { id: m.id, type: m.type, payload: m.payload }
    if (m.where === Where.Delayed) return { ...info, state: 'delayed', dueAt: delayed.dueOf(m) }
    if (m.where === Where.Backoff) return { ...info, state: 'retry-scheduled', dueAt: retries.dueOf(m) }
    return { ...info, state: 'waiting' }
  }

  /** `loop.jobs.cancel()`. */
  cancel(key: string): JobCancelResult {
    const m = this.#p.extras.jobNamed(key)
    if (m === undefined) return 'unknown'
    if (!isWaiting(m)) return m.where === Where.Running ? 'started' : 'unknown'
    this.#p.cancel(m, `loop.jobs.cancel(${key})`)
    return 'cancelled'
  }

  /** Job keys naming a message now. */
  get size(): number {
    return this.#p.extras.jobs
  }

  // The message waiting under `key`, if one waits (not running, not finished).
  #waiting(key: string): Envelope | undefined {
    const m = this.#p.extras.jobNamed(key)
    return m !== undefined && isWaiting(m) ? m : undefined
  }

  // Checks the options (a refusal changes nothing), then reads the mode against what waits under the key.
  #plan(type: string, options: PostOptions, dueAt: number | undefined): Plan {
    this.#p.admission.checkOptions(type, options)
    const old = this.#waiting(options.jobKey as string)
    const mode = options.jobKeyMode ?? 'replace'
    if (mode === 'preserve_run_at' && old !== undefined) return { old, due: this.#dueOf(old), untilEpochMs: undefined }
    if (mode !== 'debounce') return { old, due: dueAt, untilEpochMs: undefined }
    const { clock } = this.#p
    const [now, wall] = [clock.now(), wallNow(clock)]
    const maxWait = options.maxWaitMs
    const until =
      old === undefined ? (maxWait === undefined ? undefined : wall + maxWait) : this.#p.extras.jobOf(old)?.untilEpochMs
    if (until === undefined) return { old, due: dueAt, untilEpochMs: undefined }
    return { old, due: Math.min(dueAt ?? now, now + until - wall), untilEpochMs: until }
  }

  // When a waiting message is due: its wheel time, or undefined (due already).
  #dueOf(m: Envelope): number | undefined {
    const { delayed, retries } = this.#p.waits
    return m.where === Where.Delayed ? delayed.dueOf(m) : m.where === Where.Backoff ? retries.dueOf(m) : undefined
  }

  // The new message was accepted (not dropped): the key names it, and the one it replaces is cancelled.
  #took(message: unknown, options: PostOptions, plan: Plan): void {
    const m = message as Envelope | undefined
    if (m === undefined || m.where === Where.Done || m.where === Where.HandedOver) return
    const key = options.jobKey as string
    this.#p.extras.bindJob(m, plan.untilEpochMs === undefined ? { key } : { key, untilEpochMs: plan.untilEpochMs })
    if (plan.old !== undefined && isWaiting(plan.old)) {
      this.#p.cancel(plan.old, `replaced by a post with job key ${key}`)
    }
  }
}

// The `tryPost` status of what a keyed post that waits was refused with (undefined: bad input, thrown).
function statusOf(error: unknown): RefusalStatus | undefined {
  if (error instanceof DelayedFullError) return 'full'
  if (error instanceof StoreError) return 'not-durable'
  return refusalStatusOf(error)
}

/** Whether `m` has not started running (nor finished): a job key may still cancel or replace it. */
export function isWaiting(m: Envelope): boolean {
  const w = m.where
  return w !== Where.Running && w !== Where.Done && w !== Where.HandedOver
}
