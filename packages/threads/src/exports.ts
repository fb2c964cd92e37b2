/**
 * Finding a handler module's export — one rule for the pool's threads and for the check at
 * registration: the named export, or for `default` a CommonJS module compiled from TypeScript
 * (`exports.default = fn`, which `import()` wraps once more).
 *
 * @module
 */

/** The export `name` of an imported module namespace, or what is wrong with it. */
export function exportOf(
  mod: Record<string, unknown>,
  name: string,
): { fn: (...args: never[]) => unknown } | { problem: string } {
  let value = mod[name]
  if (name === 'default' && typeof value === 'object' && value !== null) {
    const inner = (value as { default?: unknown }).default
    if (typeof inner === 'function') value = inner
  }
  if (typeof value === 'function') return { fn: value as (...args: never[]) => unknown }
  return { problem: `its export \`${name}\` ${name in mod ? `is ${typeof value}, not a function` : 'is not exported'}` }
}
