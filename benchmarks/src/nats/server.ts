/**
 * A private nats-server for the NATS suite and the cluster example: JetStream on, its store and log in
 * a temp dir, on a free port of 127.0.0.1 (`nats-server -a 127.0.0.1 -p <port> -js -sd <dir>`), stopped
 * at the end and killed at exit whatever happens — the recipe of `packages/nats/test/server.ts`, without
 * vitest. Without a binary it says why, and how to get one.
 *
 * @module
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { connect as tcpConnect } from 'node:net'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { freePort } from '../durable/servers.js'

/** How to install a nats-server, for the messages of a machine without one. */
export const INSTALL_HINT = [
  'Debian/Ubuntu: apt-get install nats-server   (it lands in /usr/sbin)',
  'macOS:         brew install nats-server',
  'Docker:        docker run -p 4222:4222 nats -js   (then run with NATS_URL=127.0.0.1:4222)',
].join('\n')

/**
 * Finds `nats-server`: `$NATS_SERVER_BIN` if set (a path that does not exist means none), else on
 * `PATH`, or where Debian puts it (`/usr/sbin`, often not on a user's `PATH`).
 */
export function natsBinary(): string | undefined {
  const given = process.env['NATS_SERVER_BIN']
  if (given !== undefined && given !== '') return existsSync(given) ? given : undefined
  const dirs = (process.env['PATH'] ?? '').split(delimiter).filter((d) => d !== '')
  dirs.push('/usr/sbin', '/usr/local/sbin')
  return dirs.map((d) => join(d, 'nats-server')).find((file) => existsSync(file))
}

/** A running private nats-server. */
export interface NatsServer {
  /** `127.0.0.1:<port>`. */
  readonly url: string
  /** `nats-server v2.9.10, JetStream file store in a temp dir`. */
  readonly description: string
  /** CPU time the server process used so far (user + system, ms; from /proc, 0 elsewhere). */
  cpuMs(): number
  /** Stops it (SIGTERM, SIGKILL after 5 s) and removes its directory. */
  stop(): Promise<void>
}

/** The server, or why there is none. */
export type StartedNats =
  | { readonly ok: true; readonly server: NatsServer }
  | { readonly ok: false; readonly reason: string }

function accepting(port: number): Promise<boolean> {
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

// Ready once the log says JetStream is up and the port accepts connections.
export async function waitReady(child: ChildProcess, port: number, log: string, ms: number): Promise<void> {
  const deadline = Date.now() + ms
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error('exited')
    const text = existsSync(log) ? readFileSync(log, 'utf8') : ''
    if (text.includes('Server is ready') && (await accepting(port))) return
    if (Date.now() > deadline) throw new Error(`not ready after ${ms} ms`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

export function halt(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
    child.once('exit', () => {
      clearTimeout(timer)
      resolve()
    })
    child.kill('SIGTERM')
  })
}

// utime + stime of a process, from /proc/<pid>/stat (clock ticks of 10 ms on Linux).
export function cpuOf(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return 0
  }
}

/**
 * Starts a private nats-server with JetStream, if the machine has the binary — or, with `$NATS_URL`
 * set (`127.0.0.1:4222`, a server of your own such as the Docker one, JetStream on), uses that one.
 */
export async function startNats(): Promise<StartedNats> {
  const external = process.env['NATS_URL']
  if (external !== undefined && external !== '') {
    const description = `the server at $NATS_URL (${external})`
    return { ok: true, server: { url: external, description, cpuMs: () => 0, stop: async () => {} } }
  }
  const binary = natsBinary()
  if (binary === undefined) return { ok: false, reason: 'no `nats-server` binary ($NATS_SERVER_BIN, PATH, /usr/sbin)' }
  const dir = mkdtempSync(join(tmpdir(), 'flowing-nats-bench-'))
  const log = join(dir, 'nats.log')
  const port = await freePort()
  const args = ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', join(dir, 'store'), '-l', log]
  const child = spawn(binary, args, { stdio: 'ignore' })
  const kill = () => child.kill('SIGKILL')
  process.once('exit', kill)
  try {
    await waitReady(child, port, log, 15_000)
  } catch (error) {
    kill()
    process.off('exit', kill)
    const tail = existsSync(log) ? readFileSync(log, 'utf8').split('\n').slice(-10).join('\n') : ''
    rmSync(dir, { recursive: true, force: true })
    return { ok: false, reason: `nats-server did not start (${(error as Error).message}): ${tail}` }
  }
  const version = execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim()
  const stop = async () => {
    process.off('exit', kill)
    await halt(child)
    rmSync(dir, { recursive: true, force: true })
  }
  return {
    ok: true,
    server: {
      url: `127.0.0.1:${port}`,
      description: `${version}, JetStream file store in a temp dir`,
      cpuMs: () => cpuOf(child.pid),
      stop,
    },
  }
}
