/**
 * Sweep progress on stderr: a progress bar redrawn in place when stderr is a terminal, one plain line
 * per worker count when it is not (a CI log, a file), nothing with `--quiet`.
 *
 * @module
 */

/**
 * Where the sweep reports how far it is.
 *
 * @group Report
 */
export interface Progress {
  /** Trial `done` of `total` starts; `label` names it (`8 workers, trial 2/3`). */
  step(label: string, done: number, total: number): void
  /** A line that stays (a count's result). */
  line(text: string): void
  /** The sweep is over: clears the bar. */
  end(): void
}

/**
 * The part of a stream the progress needs (`process.stderr`).
 *
 * @group Report
 */
export interface ProgressStream {
  readonly isTTY?: boolean
  readonly columns?: number
  write(text: string): unknown
}

/**
 * No progress at all (`--quiet`).
 *
 * @group Report
 */
export const silentProgress: Progress = { step() {}, line() {}, end() {} }

/**
 * Progress on `stream`: a bar when it is a TTY, plain lines otherwise.
 *
 * @group Report
 */
export function createProgress(stream: ProgressStream): Progress {
  if (stream.isTTY !== true) {
    return { step() {}, line: (text) => stream.write(`${text}\n`), end() {} }
  }
  let drawn = false
  const clear = (): void => {
    if (drawn) stream.write('\r\x1b[2K')
    drawn = false
  }
  return {
    step(label, done, total) {
      clear()
      stream.write(bar(label, done, total, stream.columns ?? 80))
      drawn = true
    },
    line(text) {
      clear()
      stream.write(`${text}\n`)
    },
    end: clear,
  }
}

/**
 * `[#######.............]  7/18  8 workers, trial 2/3`, cut to `columns`.
 *
 * @group Report
 */
export function bar(label: string, done: number, total: number, columns: number): string {
  const width = 24
  const filled = total > 0 ? Math.round((done / total) * width) : 0
  const text = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(done).padStart(String(total).length)}/${total}  ${label}`
  return text.slice(0, Math.max(10, columns - 1))
}
