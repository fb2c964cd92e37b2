/**
 * Renamed options: where an option's old name is still accepted — with a `DeprecationWarning` once
 * per process — and refused beside its new name.
 *
 * @module
 */

/**
 * An option that was renamed.
 *
 * @group Options
 */
export interface Rename {
  /** The old, deprecated name. */
  readonly from: string
  /** The name that replaced it. */
  readonly to: string
  /** The warning's code, e.g. `FLOWING_DEP_BREAKER` (Node prints each code once with `--no-deprecation` off). */
  readonly code: string
}

// Codes already warned about in this process.
const warned = new Set<string>()

/**
 * Emits a `DeprecationWarning` with `code`, once per process (`process.emitWarning`; silent where
 * there is no `process`).
 *
 * @group Options
 */
export function warnDeprecated(code: string, message: string): void {
  if (warned.has(code)) return
  warned.add(code)
  const p = (globalThis as { process?: { emitWarning?: (m: string, o: object) => void } }).process
  p?.emitWarning?.(message, { type: 'DeprecationWarning', code })
}

/**
 * `options` with every old name of `renames` moved to its new name, warning once per rename. The
 * caller's object is not touched (a copy is returned when something moved).
 *
 * @param path - the options' name in messages, e.g. `options` (`''`: the keys alone)
 * @param fail - builds the error when both names are given: `(name, rule, value)`
 * @throws what `fail` returns, when an old name and its new name are both given
 *
 * @example
 * ```ts
 * import { renameOptions } from '@flowing/errors'
 *
 * const renames = [{ from: 'breaker', to: 'circuitBreaker', code: 'APP_DEP_BREAKER' }]
 * const fail = (name: string, rule: string) => new TypeError(`${name}: ${rule}`)
 * console.log(renameOptions('options', { breaker: true }, renames, fail)) // { circuitBreaker: true }
 * ```
 *
 * @group Options
 */
export function renameOptions(
  path: string,
  options: Readonly<Record<string, unknown>>,
  renames: readonly Rename[],
  fail: (name: string, rule: string, value: unknown) => Error,
): Record<string, unknown> {
  let out: Record<string, unknown> | undefined
  const named = (key: string) => (path === '' ? key : `${path}.${key}`)
  for (const { from, to, code } of renames) {
    if (!Object.hasOwn(options, from) || options[from] === undefined) continue
    if (options[to] !== undefined) {
      throw fail(
        named(from),
        `absent when \`${named(to)}\` is given (\`${from}\` is its deprecated name)`,
        options[from],
      )
    }
    warnDeprecated(code, `\`${named(from)}\` is deprecated: use \`${named(to)}\` (same meaning).`)
    out ??= { ...options }
    out[to] = out[from]
    delete out[from]
  }
  return out ?? (options as Record<string, unknown>)
}
