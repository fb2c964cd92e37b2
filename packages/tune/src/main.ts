#!/usr/bin/env node
/**
 * `flowing-tune` — sweeps worker counts on the user's own handlers and recommends one. The process
 * entry: exit codes and one-line errors; the work is in `run.ts`.
 *
 * @module
 */
import { parseArgs, USAGE } from './args.js'
import { ExitCode, fullCause, ModuleLoadError, oneLine, TuneError } from './errors.js'
import { tune } from './run.js'
import { runSmoke } from './smoke.js'

const print = (text: string): void => {
  process.stdout.write(`${text}\n`)
}

function fail(error: unknown): number {
  if (error instanceof TuneError) {
    process.stderr.write(`✗ flowing-tune: ${error.message}\n`)
    // Why a module does not load is in what the import threw: its whole chain, stacks and all.
    if (error instanceof ModuleLoadError) process.stderr.write(`${indent(fullCause(error.cause))}\n`)
    if (error.exitCode === ExitCode.usage) process.stderr.write('Run `flowing-tune --help` for usage.\n')
    return error.exitCode
  }
  // Not ours to explain in detail: one line, the stack only on request.
  // A failed smoke assertion is read by a developer: its diff is the point, so print it whole.
  const text = error instanceof Error && error.name === 'AssertionError' ? error.message : oneLine(error)
  process.stderr.write(`✗ flowing-tune: unexpected error: ${text}\n`)
  if (process.env['FLOWING_TUNE_DEBUG'] && error instanceof Error) process.stderr.write(`${error.stack ?? ''}\n`)
  else process.stderr.write('  (set FLOWING_TUNE_DEBUG=1 to see the stack)\n')
  return ExitCode.failed
}

const indent = (text: string): string => text.replace(/^/gm, '  ')

async function main(argv: readonly string[]): Promise<number> {
  const command = parseArgs(argv)
  if (command.kind === 'help') {
    print(USAGE)
    return ExitCode.ok
  }
  if (command.kind === 'smoke') {
    await runSmoke(print, command.module)
    return ExitCode.ok
  }
  await tune(command.options, print)
  return ExitCode.ok
}

// Under `pnpm tune` the script runs in benchmarks/, but the user's paths are relative to where they typed
// the command (pnpm and npm pass it as INIT_CWD).
if (process.env['npm_lifecycle_event'] === 'tune' && process.env['INIT_CWD']) process.chdir(process.env['INIT_CWD'])

// A handler's stray rejection would otherwise end the process with a stack dump.
process.on('unhandledRejection', (reason) => {
  process.exit(
    fail(
      new TuneError('ERR_FLOWING_TUNE_HANDLERS', `a handler left a promise rejection unhandled: ${oneLine(reason)}`),
    ),
  )
})
main(process.argv.slice(2)).then(
  // Exit explicitly: the user's module may hold timers or sockets open.
  (code) => process.exit(code),
  (error: unknown) => process.exit(fail(error)),
)
