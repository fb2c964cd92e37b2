/**
 * The entry-point wrapper every suite shares: runs `main`, maps errors to exit codes (1 for a failed
 * check, 2 for a bad command line), and fails a run whose event loop emptied before it finished.
 *
 * @module
 */
import { BenchError } from './check.js'
import { UsageError } from './cli.js'

/**
 * Runs a suite's `main` with the process arguments.
 *
 * @param name - the suite's name, for messages
 * @param usage - the usage text printed after a bad command line
 * @param main - the suite
 */
export function runSuite(name: string, usage: string, main: (args: string[]) => Promise<void>): void {
  // A promise that never settles (a lost message or timer) would let Node exit 0 with an empty event
  // loop: the exit hook turns that into a failure.
  let finished = false
  process.on('exit', () => {
    if (!finished && process.exitCode === undefined) {
      process.stderr.write(`✗ ${name}: the event loop emptied before the benchmark finished (work was lost)\n`)
      process.exitCode = 1
    }
  })
  main(process.argv.slice(2)).then(
    () => {
      finished = true
    },
    (error: unknown) => {
      finished = true
      if (error instanceof BenchError) process.stderr.write(`✗ ${name}: ${error.message}\n`)
      else if (error instanceof UsageError) process.stderr.write(`✗ ${error.message}\n\n${usage}\n`)
      else
        process.stderr.write(
          `✗ ${name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
        )
      process.exitCode = error instanceof UsageError ? 2 : 1
    },
  )
}
