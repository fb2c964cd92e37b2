/**
 * A child process running one of the test scripts (`node --conditions=@flowing/source --import tsx`),
 * its stdout lines collected, for the tests that freeze or kill a process for real.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { eventually } from './fixtures.js'

const HERE = fileURLToPath(new URL('.', import.meta.url))

/** A child process running `script` with `config` (as JSON, its one argument). */
export class Child {
  readonly process: ChildProcess
  readonly lines: string[] = []
  readonly exited: Promise<void>

  constructor(script: string, config: Record<string, unknown>) {
    this.process = spawn(
      process.execPath,
      ['--conditions=@flowing/source', '--import', 'tsx', script, JSON.stringify(config)],
      { cwd: HERE, stdio: ['pipe', 'pipe', 'inherit'] },
    )
    const stdout = this.process.stdout
    if (stdout === null) throw new Error('no stdout')
    const closed = new Promise<void>((resolve) => stdout.once('close', resolve))
    createInterface({ input: stdout }).on('line', (line) => this.lines.push(line))
    this.exited = Promise.all([closed, new Promise((resolve) => this.process.once('exit', resolve))]).then(() => {})
  }

  /** The first line (from `from` on) matching `pattern`. */
  waitFor(pattern: RegExp, from = 0, timeoutMs = 20_000): Promise<string> {
    return eventually(() => this.lines.slice(from).find((l) => pattern.test(l)), timeoutMs)
  }

  /** Writes `line` to its stdin. */
  send(line: string): void {
    this.process.stdin?.write(`${line}\n`)
  }

  /** Kills it with SIGKILL and waits for its end. */
  async kill(): Promise<void> {
    this.process.kill('SIGKILL')
    await this.exited
  }
}
