/**
 * The one value formatter of every Flowing argument error.
 *
 * @module
 */

/**
 * Renders a value the way argument errors quote it: `` `NaN` (number) ``, `` `"5"` (string) ``,
 * `` `[object]` (object) ``. Shared by every Flowing package, so every message quotes values alike.
 *
 * @remarks Total: it never throws and never runs user code that could — objects are shown as
 * `[object]` / `[array]` without calling `toString`, and a function's name is read under a guard — so
 * it is safe on a revoked `Proxy`, a `Proxy` whose traps all throw, a null-prototype object or a
 * throwing getter.
 *
 * @param value - anything
 * @returns the quoted rendering followed by the value's kind in parentheses
 *
 * @example
 * ```ts
 * import { describeValue } from '@flowing/errors'
 *
 * console.log(describeValue(0)) // `0` (number)
 * console.log(describeValue(Object.create(null))) // `[object]` (object)
 * ```
 *
 * @group Errors
 */
export function describeValue(value: unknown): string {
  const kind = kindOf(value)
  return `\`${show(value, kind)}\` (${kind})`
}

function kindOf(value: unknown): string {
  if (value === null) return 'null'
  try {
    if (Array.isArray(value)) return 'array'
  } catch {
    // Array.isArray throws on a revoked Proxy: it is still an object.
  }
  return typeof value
}

function show(value: unknown, kind: string): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value)
    case 'bigint':
      return `${value}n`
    case 'symbol':
      return String(value) // never calls user code, unlike `${value}` (which throws for symbols)
    case 'function':
      return `[function ${functionName(value)}]`
    case 'object':
      return kind === 'array' ? '[array]' : kind === 'null' ? 'null' : '[object]'
    default:
      return String(value) // number, boolean, undefined
  }
}

function functionName(fn: unknown): string {
  try {
    const name = (fn as { readonly name?: unknown }).name
    return typeof name === 'string' && name !== '' ? name : 'anonymous'
  } catch {
    return 'anonymous' // a Proxy whose get trap throws
  }
}
