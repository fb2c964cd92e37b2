/**
 * Per-post settings that most posts never use (`handlerTimeoutMs`, `retry`), kept beside the envelope
 * so the envelope stays small and messages without them pay one boolean check.
 *
 * @module
 */
import type { RetryOptions } from '../failure/retry-policy.js'
import type { Envelope } from '../internal/envelope.js'
import type { PostOptions } from '../message.js'

interface Extras {
  readonly timeoutMs: number | undefined
  readonly retry: RetryOptions | undefined
}

/** The rare per-post settings of live messages (weakly held: a finished message takes its entry with it). */
export class PostExtras {
  readonly #extras = new WeakMap<Envelope, Extras>()
  #used = false

  /** Keeps `options`' rare settings for `m`, if it has any. */
  keep(m: Envelope, options: PostOptions | undefined): void {
    if (options === undefined || (options.handlerTimeoutMs === undefined && options.retry === undefined)) return
    this.#used = true
    this.#extras.set(m, { timeoutMs: options.handlerTimeoutMs, retry: options.retry })
  }

  /** The per-post handler deadline of `m`, if any. */
  timeoutOf(m: Envelope): number | undefined {
    return this.#used ? this.#extras.get(m)?.timeoutMs : undefined
  }

  /** The per-post retry policy of `m`, if any. */
  retryOf(m: Envelope): RetryOptions | undefined {
    return this.#used ? this.#extras.get(m)?.retry : undefined
  }
}
