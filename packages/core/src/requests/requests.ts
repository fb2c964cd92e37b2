/**
 * Request/response: `loop.request()` posts a message and resolves with its handler's return value,
 * or rejects with why it ended without success. Only requests pay: a plain `post()` allocates no
 * promise and no closure, and its outcome costs one `size` check here.
 *
 * A request's failure belongs to its caller: when its handler fails for good, the promise rejects
 * with the handler's own error and the message ends `request-failed` — no dead letter, no alert —
 * unless the request asked for the dead letter (`deadLetter: true`).
 *
 * @module
 */
import type { Clock, TimerHandle } from '../contracts/clock.js'
import type { PostOptions, RequestOptions } from '../contracts/message.js'
import { InvalidArgumentError, RequestFailedError, type RequestOutcome } from '../errors.js'
import type { Envelope } from '../internal/envelope.js'
import * as check from '../internal/validate.js'

/** `request()`'s options, split: its own, checked, and the post's (admission checks those). */
export interface SplitRequest {
  /** Gives up after this long (ms); undefined: never. */
  readonly waitTimeoutMs: number | undefined
  /** A failure is dead-lettered as a post's is, instead of belonging to the caller alone. */
  readonly deadLetter: boolean
  /** The options left for the post. */
  readonly post: PostOptions | undefined
}

const WAIT_RULE = 'a positive finite number of ms'

/**
 * Splits and checks `request()`'s own options (`waitTimeoutMs`, `deadLetter`; `undefined` means
 * absent); the rest go to the post, which checks them. Each option is read once.
 * @throws InvalidArgumentError naming the bad option, or the option whose read threw (its `cause`)
 */
export function splitRequestOptions(options: RequestOptions | undefined): SplitRequest {
  // A non-object is the post's to refuse ("an object"); without request keys the options go as given.
  if (options === null || typeof options !== 'object' || !hasRequestKeys(options)) {
    return { waitTimeoutMs: undefined, deadLetter: false, post: options }
  }
  const { waitTimeoutMs, deadLetter, ...post } = check.snapshotOptions('options', options) as RequestOptions
  if (
    waitTimeoutMs !== undefined &&
    !(typeof waitTimeoutMs === 'number' && waitTimeoutMs > 0 && waitTimeoutMs < Infinity)
  ) {
    throw new InvalidArgumentError('options.waitTimeoutMs', WAIT_RULE, waitTimeoutMs)
  }
  if (deadLetter !== undefined) check.boolean('options.deadLetter', deadLetter)
  return { waitTimeoutMs, deadLetter: deadLetter === true, post }
}

function hasRequestKeys(options: object): boolean {
  try {
    return 'waitTimeoutMs' in options || 'deadLetter' in options
  } catch (error) {
    throw check.typedError('options', error, options) // a Proxy whose `has` trap throws
  }
}

interface Pending {
  readonly resolve: (value: unknown) => void
  readonly reject: (error: unknown) => void
  // The caller asked for the dead letter of a failure (`deadLetter: true`).
  readonly deadLetter: boolean
  m: Envelope | undefined
  timer: TimerHandle | undefined
  // Why it is being cancelled (an abort reason), for the rejection's cause.
  cause: unknown
}

/** The requests waiting for their message's outcome. */
export class Requests {
  readonly #clock: Clock
  readonly #giveUp: (m: Envelope, why: string) => void
  readonly #pending = new Map<Envelope, Pending>()
  // The request being posted: bound to its envelope by admission, before any outcome can happen.
  #armed: Pending | undefined

  /**
   * @param giveUp - cancels a message whose request timed out
   */
  constructor(clock: Clock, giveUp: (m: Envelope, why: string) => void) {
    this.#clock = clock
    this.#giveUp = giveUp
  }

  /** Requests waiting. */
  get size(): number {
    return this.#pending.size
  }

  /**
   * Runs `post` as a request: the promise settles with the outcome of the message it admits.
   * @param request - its checked options: `waitTimeoutMs` gives up after this long (the message is
   *   cancelled); `deadLetter` keeps a failure's dead letter
   */
  open<R>(request: SplitRequest, post: () => unknown): Promise<R> {
    const { waitTimeoutMs, deadLetter } = request
    return new Promise<R>((resolve, reject) => {
      const pending: Pending = {
        resolve: resolve as (v: unknown) => void,
        reject,
        deadLetter,
        m: undefined,
        timer: undefined,
        cause: undefined,
      }
      this.#armed = pending
      try {
        post()
      } catch (error) {
        if (pending.m !== undefined) this.#pending.delete(pending.m)
        reject(error) // refused: the post's own error
        return
      } finally {
        this.#armed = undefined
      }
      const m = pending.m
      if (m === undefined || !this.#pending.has(m) || waitTimeoutMs === undefined) return
      pending.timer = this.#clock.setTimeout(() => this.#timedOut(m, waitTimeoutMs), waitTimeoutMs)
    })
  }

  /** The request being posted, if any (taken once, before user code can post something else). */
  take(): unknown {
    const armed = this.#armed
    this.#armed = undefined
    return armed
  }

  /** Binds a request {@link Requests.take}n by admission to the envelope it admits. */
  bind(m: Envelope, request: unknown): void {
    const pending = request as Pending
    pending.m = m
    this.#pending.set(m, pending)
  }

  /** `m` is being cancelled because of `cause` (a signal's reason): its request's rejection carries it. */
  cancelling(m: Envelope, cause: unknown): void {
    const pending = this.#pending.get(m)
    if (pending !== undefined) pending.cause = cause
  }

  /** `m` succeeded with `value`. */
  succeeded(m: Envelope, value: unknown): void {
    const pending = this.#settle(m)
    pending?.resolve(value)
  }

  /**
   * Whether a request waits for `m` and takes its failure: its handler failed for good, and the
   * request did not ask for the dead letter.
   */
  takesFailure(m: Envelope): boolean {
    return this.#pending.get(m)?.deadLetter === false
  }

  /** `m` failed for good and its request {@link Requests.takesFailure}: it rejects with `error`, as thrown. */
  failedWith(m: Envelope, error: unknown): void {
    this.#settle(m)?.reject(error)
  }

  /** `m` ended without success. */
  failed(m: Envelope, outcome: RequestOutcome, detail: string, cause?: unknown): void {
    const pending = this.#settle(m)
    if (pending === undefined) return
    const why = cause ?? pending.cause
    const options = why === undefined ? undefined : { cause: why }
    pending.reject(new RequestFailedError(outcome, m.type, m.id, detail, options))
  }

  #settle(m: Envelope): Pending | undefined {
    const pending = this.#pending.get(m)
    if (pending === undefined) return undefined
    this.#pending.delete(m)
    if (pending.timer !== undefined) this.#clock.clearTimeout(pending.timer)
    return pending
  }

  #timedOut(m: Envelope, waitTimeoutMs: number): void {
    const pending = this.#pending.get(m)
    if (pending === undefined) return
    pending.timer = undefined
    this.failed(m, 'timed-out', `no outcome within ${waitTimeoutMs} ms; the message is cancelled`)
    this.#giveUp(m, 'its request timed out')
  }
}
