/**
 * The three levels' marks from the options, each checked, then their order across levels.
 *
 * @internal
 * @module
 */
import { numberRule } from '@flowing/errors'
import { BackpressureArgumentError } from '../errors.js'
import { DEFAULT_WATERMARKS, type Watermark, type Watermarks } from '../levels.js'
import { check } from './validate.js'

const MARK_NAMES = ['warn', 'shed', 'reject'] as const
const EXIT_RULE = numberRule({ min: 0, below: 1 })

/** One level's marks, defaults filled in, each checked on its own. */
function watermark(name: (typeof MARK_NAMES)[number], value: unknown): Watermark {
  const fallback = DEFAULT_WATERMARKS[name]
  if (value === undefined) return fallback
  check.optionsObject(name, value)
  check.knownKeys(name, value as object, ['enter', 'exit'])
  const { enter: givenEnter = fallback.enter, exit: givenExit = fallback.exit } = value as Partial<Watermark>
  const enter = check.number(`${name}.enter`, givenEnter, { above: 0, max: 1 })
  // An exit of 1 is refused as not below its entry, which says more than its range does.
  const exit = check.number(`${name}.exit`, givenExit, { min: 0, max: 1, rule: EXIT_RULE })
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
