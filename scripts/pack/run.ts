/**
 * How check:pack runs a command: synchronously, its output captured; a failure throws with the
 * step's name and the command's whole output.
 *
 * @module
 */
import { execFileSync } from 'node:child_process'

/** Runs a command in `cwd`; returns its stdout, or throws naming `step` with its stdout and stderr. */
export function run(step: string, command: string, args: string[], cwd: string): string {
  try {
    return execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string }
    throw new Error(
      `check:pack — ${step} failed: ${command} ${args.join(' ')}\n${e.stdout ?? ''}${e.stderr ?? e.message}`,
    )
  }
}
