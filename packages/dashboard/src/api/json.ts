/**
 * JSON as the dashboard sends it: a `BigInt` as its digits and `n`, and anything JSON cannot carry
 * (a cycle, a throwing getter or `toJSON`) as an error object instead of an exception.
 *
 * @module
 */

const replacer = (_key: string, value: unknown): unknown => (typeof value === 'bigint' ? `${value}n` : value)

/** `value` as JSON text; `{"error": …}` when it cannot be serialized. */
export function toJson(value: unknown): string {
  try {
    return JSON.stringify(value, replacer) ?? 'null'
  } catch (error) {
    return JSON.stringify({ error: `not serializable: ${error instanceof Error ? error.message : String(error)}` })
  }
}
