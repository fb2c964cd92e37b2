/**
 * A private nats-server per test file, never a mock: JetStream on, a store directory and a log of its
 * own under the system temp directory, on a free port of 127.0.0.1. It can be stopped, killed
 * (`SIGKILL`), restarted on the same port and store, and frozen (`SIGSTOP`) — the failures a
 * transport must survive. Without a `nats-server` binary the suites skip, saying why.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer, connect as tcpConnect } from 'node:net'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { jetstreamManager } from '@nats-io/jetstream'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { afterAll, beforeAll, describe } from 'vitest'

/** Finds `nats-server`: on `PATH`, or where Debian puts it (`/usr/sbin`, often not on a user's `PATH`). */
export function natsBinary(): string | undefined {
  const dirs = (process.env['PATH'] ?? '').split(delimiter).filter((d) => d !== '')
  dirs.push('/usr/sbin', '/usr/local/sbin')
  return dirs.map((d) => join(d, 'nats-server')).find((file) => existsSync(file))
}

/** Why the suites skip on this machine, if they do. */
export const skipReason: string | undefined =
  natsBinary() === undefined
    ? 'no `nats-server` binary on PATH nor in /usr/sbin (apt-get install nats-server)'
    : undefined
if (skipReason !== undefined) console.warn(`@flowing/nats: the NATS tests are skipped — ${skipReason}`)

/** `describe`, skipped (with the console line above) where there is no nats-server. */
export const describeNats = describe.skipIf(skipReason !== undefined)

/** A free TCP port on 127.0.0.1 (free now; the server takes it a moment later). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject()))
    })
  })
}

// How long a start or a restart may take before it is a failure (a cold JetStream store is ~100 ms).
const READY_TIMEOUT_MS = 15_000

/** How {@link NatsServer.start} starts a server. */
export interface NatsServerOptions {
  /** Its store directory (kept by `stop()`); default: a fresh one in its temp directory. */
  readonly storeDir?: string
  /** Its client port; default: a free one (and three tries on a port taken in between). */
  readonly port?: number
  /** More `nats-server` arguments, kept across restarts — a cluster node's name and routes (test/cluster.ts). */
  readonly args?: readonly string[]
  /** How long a start or a restart may take to answer JetStream requests (ms). @defaultValue 15_000 */
  readonly readyTimeoutMs?: number
}

/** One running nats-server with JetStream. */
export class NatsServer {
  /** Its port on 127.0.0.1 (kept across restarts). */
  readonly port: number
  /** Its JetStream store directory (kept across restarts; removed by {@link NatsServer.stop} unless it was given). */
  readonly storeDir: string
  readonly #binary: string
  // The temp directory this harness made (the log, and the store unless one was given): removed on stop.
  readonly #dir: string
  readonly #log: string
  readonly #args: readonly string[]
  readonly #readyTimeoutMs: number
  #child: ChildProcess | undefined
  // The exit of the current process, so a stop or a restart can wait for the port to be let go.
  #exited: Promise<void> = Promise.resolve()

  private constructor(binary: string, port: number, dir: string, storeDir: string, opts: NatsServerOptions) {
    this.#binary = binary
    this.port = port
    this.#dir = dir
    this.storeDir = storeDir
    this.#log = join(dir, 'nats.log')
    this.#args = opts.args ?? []
    this.#readyTimeoutMs = opts.readyTimeoutMs ?? READY_TIMEOUT_MS
  }

  /**
   * Starts a server on a free port (or `port`) with a fresh store (or `storeDir`), and waits until
   * JetStream answers.
   * @throws when there is no nats-server binary, or it does not come up (the message quotes its log)
   */
  static async start(opts: NatsServerOptions = {}): Promise<NatsServer> {
    const binary = natsBinary()
    if (binary === undefined) throw new Error(`cannot start nats-server: ${skipReason}`)
    const dir = mkdtempSync(join(tmpdir(), 'flowing-nats-'))
    for (let attempt = 1; ; attempt++) {
      const port = opts.port ?? (await freePort())
      const server = new NatsServer(binary, port, dir, opts.storeDir ?? join(dir, 'store'), opts)
      try {
        await server.#launch()
        return server
      } catch (error) {
        await server.#halt('SIGKILL')
        // The port was taken in between, three times (or the one asked for is): something else is wrong.
        if (attempt === 3 || opts.port !== undefined) {
          rmSync(dir, { recursive: true, force: true })
          throw error
        }
      }
    }
  }

  /** Its address, `127.0.0.1:<port>`, as `connect({ servers })` takes it. */
  get url(): string {
    return `127.0.0.1:${this.port}`
  }

  /** Stops the server (`SIGTERM`, then `SIGKILL` after 5 s) and removes its temp directory. */
  async stop(): Promise<void> {
    await this.#halt('SIGTERM')
    rmSync(this.#dir, { recursive: true, force: true })
  }

  /** Kills the server at once (`SIGKILL`): a crash. Its store stays for {@link NatsServer.restart}. */
  kill9(): void {
    this.#child?.kill('SIGKILL')
  }

  /** Stops the server (if it runs) and starts it again on the same port and store; waits until JetStream answers. */
  async restart(): Promise<void> {
    await this.#halt('SIGTERM')
    await this.#launch()
  }

  /**
   * Freezes the server (`SIGSTOP`): its sockets stay open, nothing answers — a partition or a GC pause.
   * Returns once every thread has stopped (the signal stops a Go process's threads one by one: a
   * request sent right after `kill` could still be answered).
   */
  freeze(): void {
    const child = this.#child
    if (child?.pid === undefined) return
    child.kill('SIGSTOP')
    waitStopped(child.pid)
  }

  /** Lets a frozen server run again (`SIGCONT`). */
  thaw(): void {
    this.#child?.kill('SIGCONT')
  }

  // Spawns the process and waits until it is ready; the log is appended to across restarts.
  async #launch(): Promise<void> {
    const args = [
      '-a',
      '127.0.0.1',
      '-p',
      String(this.port),
      '-js',
      '-sd',
      this.storeDir,
      '-l',
      this.#log,
      ...this.#args,
    ]
    const child = spawn(this.#binary, args, { stdio: 'ignore' })
    this.#child = child
    let exited = false
    this.#exited = new Promise((resolve) => {
      child.once('exit', () => {
        exited = true
        resolve()
      })
      child.once('error', () => resolve())
    })
    const deadline = Date.now() + this.#readyTimeoutMs
    while (!(await this.#ready())) {
      if (exited || Date.now() > deadline) {
        const why = exited ? 'exited' : `did not answer within ${this.#readyTimeoutMs} ms`
        throw new Error(`nats-server on port ${this.port} ${why}; its log:\n${this.#tail()}`)
      }
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
  }

  // Ready: the port accepts TCP (cheap, polled first) and JetStream answers an account-info request.
  async #ready(): Promise<boolean> {
    if (!(await accepting(this.port))) return false
    try {
      const nc = await connect({ servers: this.url, reconnect: false, timeout: 1_000 })
      try {
        await (await jetstreamManager(nc, { timeout: 1_000 })).getAccountInfo()
        return true
      } finally {
        await nc.close()
      }
    } catch {
      return false // JetStream still recovering its store
    }
  }

  // Sends `signal` (thawing a frozen server first, which could not act on it) and waits for the exit.
  async #halt(signal: NodeJS.Signals): Promise<void> {
    const child = this.#child
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return
    child.kill('SIGCONT')
    child.kill(signal)
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
    await this.#exited
    clearTimeout(timer)
    this.#child = undefined
  }

  // The end of the server's log, for a start that failed.
  #tail(): string {
    try {
      return readFileSync(this.#log, 'utf8').split('\n').slice(-20).join('\n')
    } catch {
      return '(no log)'
    }
  }
}

// Waits (synchronously, up to a second) until every thread of `pid` is stopped, as Linux's /proc
// tells; elsewhere it returns at once.
function waitStopped(pid: number): void {
  const tick = new Int32Array(new SharedArrayBuffer(4))
  for (let waited = 0; waited < 1_000; waited++) {
    try {
      const threads = readdirSync(`/proc/${pid}/task`)
      const stopped = (t: string) => /^\d+ \(.*\) [tT] /.test(readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8'))
      if (threads.every(stopped)) return
    } catch {
      return // no /proc, or the process is gone
    }
    Atomics.wait(tick, 0, 0, 1)
  }
}

/** Whether something accepts TCP connections on 127.0.0.1:`port` now. */
export function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host: '127.0.0.1', port })
    socket.setTimeout(500)
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('timeout', () => {
      socket.destroy()
      resolve(false)
    })
    socket.once('error', () => resolve(false))
  })
}

/**
 * The file's server: started in `beforeAll`, stopped (and its directory removed) in `afterAll`. Call it
 * inside a `describeNats` callback; the getter throws if read before `beforeAll` ran.
 */
export function useNatsServer(opts: NatsServerOptions = {}): () => NatsServer {
  let server: NatsServer | undefined
  beforeAll(async () => {
    server = await NatsServer.start(opts)
  })
  afterAll(async () => {
    await server?.stop()
  })
  return () => {
    if (server === undefined) throw new Error('useNatsServer(): the server is read before beforeAll started it')
    return server
  }
}

/**
 * Connections to the file's server, each one another process as far as NATS can tell: `connection()`
 * opens one; all are closed in `afterAll`. Call it inside a `describeNats` callback.
 */
export function useConnections(server: () => NatsServer): () => Promise<NatsConnection> {
  const connections: NatsConnection[] = []
  afterAll(async () => {
    await Promise.all(connections.splice(0).map((nc) => nc.close()))
  })
  return async () => {
    const nc = await connect({ servers: server().url })
    connections.push(nc)
    return nc
  }
}
