/**
 * Argument checks. Each throws a {@link BackpressureArgumentError} naming the argument, the rule and
 * the value, before anything changed.
 *
 * @internal
 * @module
 */
import { closestName } from '@flowing/errors'
import { BackpressureArgumentError } from '../errors.js'
import { DEFAULT_WATERMARKS, type Watermark, type Watermarks } from '../levels.js'

/** The rule a fill ratio breaks, as the error message states it. */
export const FILL_RULE = 'a finite number ≥ 0'
/** The rule a priority or threshold breaks. */
export const PRIORITY_RULE = 'a number (not NaN)'

/** Throws unless `value` is a finite number ≥ 0. */
export function checkNonNegative(argument: string, value: unknown): number {
  if (typeof value !== 'number' || !(value >= 0 && value <= Number.MAX_VALUE)) {
    throw new BackpressureArgumentError(argument, 'a finite number ≥ 0', value)
  }
  return value
}

/** Throws unless `value` is a finite number > 0. */
export function checkPositive(argument: string, value: unknown): number {
  if (typeof value !== 'number' || !(value > 0 && value <= Number.MAX_VALUE)) {
    throw new BackpressureArgumentError(argument, 'a finite number > 0', value)
  }
  return value
}

/** Throws unless `value` is an integer ≥ 1. */
export function checkCount(argument: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new BackpressureArgumentError(argument, 'an integer ≥ 1', value)
  }
  return value
}

/** Throws unless `value` is a function. */
export function checkFunction<F extends (...args: never[]) => unknown>(argument: string, value: unknown): F {
  if (typeof value !== 'function') throw new BackpressureArgumentError(argument, 'a function', value)
  return value as F
}

/** Throws unless `value` is `undefined` or a plain options object. */
export function checkOptions(argument: string, value: unknown): void {
  if (value !== undefined && (value === null || typeof value !== 'object' || Array.isArray(value))) {
    throw new BackpressureArgumentError(argument, 'an options object', value)
  }
}

/** Throws when `options` has a key not in `known` (a typo such as `minDwellMS` is not silently ignored). */
export function checkKnownKeys(argument: string, options: object, known: readonly string[]): void {
  for (const [key, value] of Object.entries(options)) {
    if (!known.includes(key)) {
      const list = known.map((k) => `\`${k}\``).join(', ')
      const near = closestName(key, known)
      const hint = near === undefined ? '' : ` — did you mean \`${near}\`?`
      throw new BackpressureArgumentError(`${argument}.${key}`, `absent (unknown option${hint}; known: ${list})`, value)
    }
  }
}

const MARK_NAMES = ['warn', 'shed', 'reject'] as const

/** One level's marks, defaults filled in, each checked on its own. */
function watermark(name: (typeof MARK_NAMES)[number], value: unknown): Watermark {
  const fallback = DEFAULT_WATERMARKS[name]
  if (value === undefined) return fallback
  checkOptions(name, value)
  checkKnownKeys(name, value as object, ['enter', 'exit'])
  const { enter = fallback.enter, exit = fallback.exit } = value as Partial<Watermark>
  if (typeof enter !== 'number' || !(enter > 0 && enter <= 1)) {
    throw new BackpressureArgumentError(`${name}.enter`, 'a number in (0, 1]', enter)
  }
  if (typeof exit !== 'number' || !(exit >= 0 && exit <= 1)) {
    throw new BackpressureArgumentError(`${name}.exit`, 'a number in [0, 1)', exit)
  }
  if (!(exit < enter)) throw new BackpressureArgumentError(`${name}.exit`, `below \`${name}.enter\` (${enter})`, exit)
  return { enter, exit }
}

/**
 * The three levels' marks from the options: each level checked, then the order across levels
 * (entries strictly increasing, exits strictly increasing).
 */
export function parseWatermarks(options: Readonly<Record<string, unknown>>): Watermarks {
  const [warn, shed, reject] = MARK_NAMES.map((name) => watermark(name, options[name])) as [
    Watermark,
    Watermark,
    Watermark,
  ]
  const pairs: [string, Watermark, string, Watermark][] = [
    ['warn', warn, 'shed', shed],
    ['shed', shed, 'reject', reject],
  ]
  for (const [lowName, low, highName, high] of pairs) {
    if (!(high.enter > low.enter)) {
      throw new BackpressureArgumentError(`${highName}.enter`, `above \`${lowName}.enter\` (${low.enter})`, high.enter)
    }
    if (!(high.exit > low.exit)) {
      throw new BackpressureArgumentError(`${highName}.exit`, `above \`${lowName}.exit\` (${low.exit})`, high.exit)
    }
  }
  return Object.freeze({ warn: Object.freeze(warn), shed: Object.freeze(shed), reject: Object.freeze(reject) })
}
