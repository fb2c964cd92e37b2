/**
 * The package's argument checks: the kit of `@flowing/errors` bound to
 * {@link BackpressureArgumentError}, and the rules the hot paths test inline.
 *
 * @internal
 * @module
 */
import { argumentChecks, numberRule } from '@flowing/errors'
import { BackpressureArgumentError } from '../errors.js'

/** The rule a fill ratio breaks, as the error message states it: a finite number ≥ 0. */
export const FILL_RULE = numberRule({ min: 0 })
/** The rule a priority or threshold breaks: a number (not NaN). */
export const PRIORITY_RULE = numberRule({ finite: false })

// This package's options once spoke of an unknown one in these words, and its users' tests may match them.
export const check = argumentChecks(BackpressureArgumentError, (known, near) => {
  const hint = near === undefined ? '' : ` — did you mean \`${near}\`?`
  return { rule: `absent (unknown option${hint}; known: ${known.map((k) => `\`${k}\``).join(', ')})` }
})

export const { knownKeys: checkKnownKeys, optionsObject: checkOptions, fn: checkFunction } = check

/** A finite number ≥ 0. */
export const checkNonNegative = (argument: string, value: unknown): number => check.number(argument, value, { min: 0 })

/** A finite number > 0. */
export const checkPositive = (argument: string, value: unknown): number => check.number(argument, value, { above: 0 })

/** An integer ≥ 1. */
export const checkCount = (argument: string, value: unknown): number => check.integer(argument, value, { min: 1 })
