/**
 * The answer of {@link @flowing/backpressure!WatermarkController.decide | WatermarkController.decide}: one of four pre-allocated, frozen objects, so
 * deciding never allocates and a decision can be compared by identity.
 *
 * @module
 */

/**
 * What happens to the post.
 *
 * @group Decisions
 */
export type DecisionOutcome = 'admit' | 'shed' | 'reject'

/**
 * Why: `none` (admitted), `shed-level` (level `shed`, priority less urgent than the threshold),
 * `reject-level` (level `reject`), `breaker` (the {@link @flowing/backpressure!AdmissionBreaker | AdmissionBreaker} is open, or half-open with
 * the fill still above `reject.exit`).
 *
 * @group Decisions
 */
export type DecisionCause = 'none' | 'shed-level' | 'reject-level' | 'breaker'

/**
 * One admission decision. Always one of the {@link @flowing/backpressure!Decisions | Decisions} objects.
 *
 * @group Decisions
 */
export interface Decision {
  /** What happens to the post. */
  readonly outcome: DecisionOutcome
  /** `outcome === 'admit'`, for the hot path. */
  readonly admitted: boolean
  /** Why. */
  readonly cause: DecisionCause
}

/**
 * Every decision {@link @flowing/backpressure!WatermarkController.decide | WatermarkController.decide} can return. Frozen; compare by identity
 * (`decision === Decisions.admit`) or read `admitted`.
 *
 * @group Decisions
 */
export const Decisions: {
  /** Admitted. */
  readonly admit: Decision
  /** Shed: level `shed` and the priority is less urgent than the threshold. */
  readonly shed: Decision
  /** Rejected: level `reject`. */
  readonly reject: Decision
  /** Rejected: the admission breaker holds the gate closed. */
  readonly breakerOpen: Decision
} = Object.freeze({
  admit: Object.freeze({ outcome: 'admit', admitted: true, cause: 'none' }),
  shed: Object.freeze({ outcome: 'shed', admitted: false, cause: 'shed-level' }),
  reject: Object.freeze({ outcome: 'reject', admitted: false, cause: 'reject-level' }),
  breakerOpen: Object.freeze({ outcome: 'reject', admitted: false, cause: 'breaker' }),
} as const)
