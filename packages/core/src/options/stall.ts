/**
 * The loop's `stall` option: which `StallDetector` settings a user may give, and their validation. The
 * loop supplies the rest (its clock, its queue, its running attempts, its `stall` event).
 *
 * @module
 */
import type { StallOptions } from '../contracts/options.js'
import { InvalidArgumentError } from '../errors.js'
import * as check from '../internal/validate.js'

// The detector's options the loop supplies itself, and where a user finds them instead.
const SUPPLIED: Readonly<Record<string, string>> = {
  onStall: "absent: the loop reports each stall as its `stall` event (`loop.events.on('stall', …)`)",
  timers: "absent: the loop's `clock` option is its time source",
  busy: 'absent: the loop supplies it (work is queued)',
  describeRunning: 'absent: the loop supplies it (its running attempts)',
}
const KNOWN: readonly (keyof StallOptions)[] = ['intervalMs', 'blockedMs', 'noProgressMs']

/**
 * Validates the `stall` loop option, naming the full path (`options.stall.intervalMs`).
 * @throws InvalidArgumentError for a wrong type, an unknown or loop-supplied key, or a bad number
 */
export function checkStall(name: string, value: unknown): boolean | StallOptions {
  if (typeof value === 'boolean') return value
  const o = check.optionGroup(name, value, KNOWN, SUPPLIED)
  for (const key of KNOWN) {
    const ms = o[key]
    if (ms !== undefined && !(typeof ms === 'number' && ms > 0 && Number.isFinite(ms))) {
      throw new InvalidArgumentError(`${name}.${key}`, 'a finite number of ms > 0', ms)
    }
  }
  return value as StallOptions
}
