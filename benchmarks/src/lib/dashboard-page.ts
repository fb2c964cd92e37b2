/**
 * One open dashboard page, as a browser would hold it: a child process that GETs the page's live
 * stream (`/api/loops/<name>/stream?view=…`), parses every `tick` event's JSON and reports one line
 * per tick on its stdout. Its own work (the socket, the parsing) runs in its process, not in the one
 * whose loop is measured.
 *
 * @module
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { BenchError } from './check.js'

// CommonJS for `node -e`; argv[1] is the stream's URL, argv[2] the view it asked for. One line per
// tick: `sampled` when its per-type rates were sampled (the dashboard's mode above 2,000 msgs/s),
// `tick` otherwise (counted exactly: a page's first seconds).
const CLIENT = `
const http = require('node:http')
const [, url, view] = process.argv
http.get(url, (res) => {
  if (res.statusCode !== 200) { process.stdout.write('status ' + res.statusCode + '\\n'); process.exit(2) }
  res.setEncoding('utf8')
  let buffer = ''
  res.on('data', (chunk) => {
    buffer += chunk
    for (let end = buffer.indexOf('\\n\\n'); end >= 0; end = buffer.indexOf('\\n\\n')) {
      const lines = buffer.slice(0, end).split('\\n')
      buffer = buffer.slice(end + 2)
      if (!lines.includes('event: tick')) continue
      const data = lines.find((l) => l.startsWith('data: '))
      const body = data === undefined ? {} : JSON.parse(data.slice(6))
      const types = body.overview === undefined ? undefined : body.overview.types
      const keys = view !== 'keys' || (body.data !== undefined && Array.isArray(body.data.keys))
      if (body.view !== view || !Array.isArray(types) || !keys) process.stdout.write('bad tick ' + data + '\\n')
      else process.stdout.write(types.length > 0 && types.every((t) => t.sampled) ? 'sampled\\n' : 'tick\\n')
    }
  })
  res.on('end', () => process.exit(0))
}).on('error', (e) => { process.stderr.write(String(e) + '\\n'); process.exit(3) })
`

/** An open page: the ticks its client has received so far, and how to close it. */
export class PageClient {
  #ticks = 0
  #sampled = 0
  #bad: string | undefined
  readonly #child: ChildProcess
  readonly #exited: Promise<void>

  /**
   * Opens the page: spawns the client on `url` (the stream of `view`).
   * @param url - `http://127.0.0.1:<port>/flowing/api/loops/<name>/stream?view=<view>`
   * @param view - the view the stream was asked for (each tick must name it)
   */
  constructor(url: string, view: string) {
    this.#child = spawn(process.execPath, ['-e', CLIENT, url, view], { stdio: ['ignore', 'pipe', 'pipe'] })
    let pending = ''
    this.#child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk
      const lines = pending.split('\n')
      pending = lines.pop() ?? ''
      for (const line of lines) {
        if (line === 'tick' || line === 'sampled') this.#ticks++
        else this.#bad ??= line.slice(0, 300)
        if (line === 'sampled') this.#sampled++
      }
    })
    this.#child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.#bad ??= chunk.trim()
    })
    this.#exited = new Promise((resolve) => this.#child.once('exit', () => resolve()))
  }

  /** `tick` events received, each with valid JSON naming the view asked for (and, for keys, with keys). */
  get ticks(): number {
    this.#check()
    return this.#ticks
  }

  /** Those of them whose per-type rates were sampled, not counted exactly. */
  get sampled(): number {
    return this.#sampled
  }

  /**
   * Resolves once the client has received `n` ticks.
   * @throws BenchError when they have not arrived within `ms`, or the client reported a problem
   */
  async waitForTicks(n: number, ms: number): Promise<void> {
    const deadline = performance.now() + ms
    while (this.ticks < n) {
      if (performance.now() > deadline) {
        throw new BenchError(`page client: ${this.#ticks} tick(s) received in ${ms / 1000} s, expected ${n}`)
      }
      await sleep(20)
    }
  }

  /** Closes the page (kills the client: its socket closes, as when a tab is closed) and waits for it to exit. */
  async close(): Promise<void> {
    this.#child.kill()
    await this.#exited
    this.#check()
  }

  #check(): void {
    if (this.#bad !== undefined) throw new BenchError(`page client: ${this.#bad}`)
  }
}

/** Resolves after `ms` (a timer that keeps the process alive). */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/**
 * Polls `condition` every 10 ms until it holds.
 * @throws BenchError naming `what` when it still fails after `ms`
 */
export async function waitUntil(what: string, condition: () => boolean, ms: number): Promise<void> {
  const deadline = performance.now() + ms
  while (!condition()) {
    if (performance.now() > deadline) throw new BenchError(`${what}: still not true after ${ms / 1000} s`)
    await sleep(10)
  }
}
