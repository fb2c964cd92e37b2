/**
 * The retry policy a producer, a handler registration or the loop passes: a contract leaf (it imports
 * nothing), shared by the message model and the failure stage that applies it.
 *
 * @module
 */

/**
 * How the back-off is randomised.
 *
 * @group Failure handling
 * @category Retries
 */
export type JitterStrategy = 'proportional' | 'full' | 'decorrelated'

/**
 * A retry policy; every field optional — what is missing comes from the next level (post → type →
 * loop → defaults).
 *
 * The back-off after failed attempt `n` is `min(capMs, baseMs × factor^(n−1))`, randomised by the
 * strategy:
 * - `proportional` (the default): ± `jitter` of it (±30 %), then capped;
 * - `full`: uniform in [0, it] (AWS "full jitter": spreads a thundering herd the most);
 * - `decorrelated`: uniform in [baseMs, 3 × the previous delay], capped (AWS "decorrelated jitter").
 *
 * @group Failure handling
 * @category Retries
 */
export interface RetryOptions {
  /**
   * Attempts in all, the first included, for `retryable` failures. `1` disables retries.
   * @defaultValue 1
   */
  readonly maxAttempts?: number
  /**
   * Attempts in all for `unknown` failures (errors neither class names): fewer, as a retry may not help.
   * @defaultValue `min(maxAttempts, 2)`
   */
  readonly unknownMaxAttempts?: number
  /**
   * First back-off (ms).
   * @defaultValue 100
   */
  readonly baseMs?: number
  /**
   * Growth per attempt, ≥ 1.
   * @defaultValue 2
   */
  readonly factor?: number
  /**
   * Longest back-off (ms), ≥ `baseMs`.
   * @defaultValue 30_000
   */
  readonly capMs?: number
  /**
   * Jitter ratio for `proportional`, in [0, 1]: `0.3` spreads a delay over ±30 %.
   * @defaultValue 0.3
   */
  readonly jitter?: number
  /**
   * The randomisation.
   * @defaultValue 'proportional'
   */
  readonly jitterStrategy?: JitterStrategy
  /**
   * `ordered` (the default): while a keyed message backs off, its key stays claimed, so later
   * messages of the key wait (per-key order holds across retries); other keys keep flowing.
   * `unordered`: the key is freed during the back-off and the retry re-enters behind newer messages.
   * @defaultValue 'ordered'
   */
  readonly order?: 'ordered' | 'unordered'
}
