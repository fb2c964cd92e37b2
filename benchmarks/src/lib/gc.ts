/**
 * Garbage-collection control for memory figures: `global.gc` exists only under `--expose-gc`, so the
 * entry point re-executes itself with the flag when it is missing.
 *
 * @module
 */
import { spawnSync } from 'node:child_process'

/**
 * Returns `true` when `global.gc` is available. Otherwise runs this same script again in a child
 * process with `--expose-gc` (same arguments, inherited stdio), sets this process's exit code to the
 * child's, and returns `false`: the caller must then do nothing more.
 */
export function ensureExposedGc(): boolean {
  if (typeof globalThis.gc === 'function') return true
  const args = ['--expose-gc', ...process.execArgv, ...process.argv.slice(1)]
  const child = spawnSync(process.execPath, args, { stdio: 'inherit' })
  if (child.error !== undefined) throw child.error
  process.exitCode = child.status ?? 1
  return false
}

/** Full, synchronous collection (twice: the first may only promote survivors). */
export function collect(): void {
  const gc = globalThis.gc
  if (gc === undefined) throw new Error('global.gc is missing: run node with --expose-gc')
  gc()
  gc()
}

/** V8 heap in use, in bytes (after {@link collect}, the live set). */
export function heapUsed(): number {
  return process.memoryUsage().heapUsed
}
