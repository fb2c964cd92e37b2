/**
 * The JSON text a journal keeps of a payload or a checkpoint, taken when it is given (the object may
 * change afterwards, even into something JSON cannot represent).
 *
 * @module
 */
import { InvalidArgumentError } from '../errors.js'
import { describe } from './batch.js'

/**
 * The JSON text of `value`.
 * @param name - what it is, for the error (`payload`, `checkpoint`)
 * @throws InvalidArgumentError when JSON cannot represent it (a cycle, a BigInt, a throwing `toJSON`)
 */
export function jsonText(name: string, value: unknown): string | undefined {
  let text: string | undefined
  try {
    text = JSON.stringify(value)
  } catch (error) {
    throw new InvalidArgumentError(name, `JSON-serializable (the loop journals it): ${describe(error)}`, value)
  }
  if (text === undefined && value !== undefined) {
    throw new InvalidArgumentError(name, 'JSON-serializable (the loop journals it)', value)
  }
  return text
}
