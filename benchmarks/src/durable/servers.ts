/**
 * Private servers for the durable suite, started in a temp dir on a free port and stopped at the end
 * (and at exit, whatever happens): a Redis for the BullMQ row (`--save '' --appendonly no`: nothing on
 * disk) and a PostgreSQL for the Postgres row — the same recipe as `packages/postgres/test/server.ts`
 * (initdb, then pg_ctl as the `postgres` user when run as root), but with `fsync=on`: a benchmark of a
 * durable acknowledgement must wait for the disk. Each start returns the server, or why there is none.
 *
 * @module
 */
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process'
import { chownSync, existsSync, readdirSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { delimiter, join } from 'node:path'
import { promisify } from 'node:util'
import { tempDir } from './journals.js'

const exec = promisify(execFile)

/** A started server: where it listens and how to stop it. */
export interface Server {
  readonly port: number
  /** What it is, for the results: binary, version, settings. */
  readonly description: string
  stop(): Promise<void>
}

/** A server, or the reason it could not be started. */
export type Started<S extends Server> =
  | { readonly ok: true; readonly server: S }
  | { readonly ok: false; readonly reason: string }

/** A free TCP port on 127.0.0.1 (free now; the server takes it a moment later). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address()
      probe.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject()))
    })
  })
}

function onPath(binary: string, extra: readonly string[] = []): string | undefined {
  const dirs = [...(process.env['PATH'] ?? '').split(delimiter).filter((d) => d !== ''), ...extra]
  const dir = dirs.find((d) => existsSync(join(d, binary)))
  return dir === undefined ? undefined : join(dir, binary)
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** Resolves once `child` prints `ready` on stdout; rejects if it exits first or after `ms`. */
function waitForLine(child: ChildProcess, ready: string, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = ''
    const timer = setTimeout(() => reject(new Error(`not ready after ${ms} ms: ${output.slice(-400)}`)), ms)
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      if (output.includes(ready)) {
        clearTimeout(timer)
        resolve()
      }
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`exited with ${code}: ${output.slice(-400)}`))
    })
  })
}

/** A private `redis-server` with nothing on disk, if the machine has one. */
export async function startRedis(): Promise<Started<Server>> {
  const binary = onPath('redis-server')
  if (binary === undefined) return { ok: false, reason: 'no `redis-server` on PATH' }
  const dir = tempDir('redis')
  try {
    const port = await freePort()
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir]
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'inherit'] })
    const kill = () => child.kill('SIGKILL')
    process.once('exit', kill)
    await waitForLine(child, 'Ready to accept connections', 10_000)
    const version = execFileSync(binary, ['--version'], { encoding: 'utf8' }).match(/v=(\S+)/)?.[1] ?? '?'
    const stop = async () => {
      process.off('exit', kill)
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve))
        child.kill('SIGTERM')
        await exited
      }
      rmSync(dir, { recursive: true, force: true })
    }
    return { ok: true, server: { port, description: `redis-server ${version} (--save '' --appendonly no)`, stop } }
  } catch (error) {
    rmSync(dir, { recursive: true, force: true })
    return { ok: false, reason: `redis-server did not start: ${reason(error)}` }
  }
}

/** A running PostgreSQL: its connection string too. */
export interface PgServer extends Server {
  /** `postgres://flowing@127.0.0.1:<port>/postgres`. */
  readonly url: string
}

interface PgBinaries {
  readonly bin: string
  readonly runAs: { readonly name: string; readonly uid: number; readonly gid: number } | undefined
}

async function findPostgres(): Promise<PgBinaries | string> {
  const lib = '/usr/lib/postgresql'
  const majors = existsSync(lib) ? readdirSync(lib).sort((a, b) => Number(b) - Number(a)) : []
  const initdb = onPath(
    'initdb',
    majors.map((m) => join(lib, m, 'bin')),
  )
  if (initdb === undefined) return 'no PostgreSQL binaries (initdb, pg_ctl) on PATH nor in /usr/lib/postgresql/*/bin'
  const bin = join(initdb, '..')
  if (process.getuid?.() !== 0) return { bin, runAs: undefined }
  try {
    const [uid, gid] = await Promise.all([exec('id', ['-u', 'postgres']), exec('id', ['-g', 'postgres'])])
    return { bin, runAs: { name: 'postgres', uid: Number(uid.stdout), gid: Number(gid.stdout) } }
  } catch {
    return 'running as root, and initdb refuses root, but there is no `postgres` user to run it as'
  }
}

function pgCommand(pg: PgBinaries, name: string, args: readonly string[]): [string, string[]] {
  const command = join(pg.bin, name)
  return pg.runAs === undefined ? [command, [...args]] : ['runuser', ['-u', pg.runAs.name, '--', command, ...args]]
}

async function runPg(pg: PgBinaries, name: string, args: readonly string[]): Promise<string> {
  const [file, argv] = pgCommand(pg, name, args)
  try {
    return (await exec(file, argv, { maxBuffer: 16 * 1024 * 1024 })).stdout
  } catch (error) {
    const e = error as { stderr?: string; stdout?: string; message: string }
    throw new Error(`${name} failed: ${(e.stderr || e.stdout || e.message).trim().slice(-400)}`)
  }
}

/** A private PostgreSQL (initdb in a temp dir, `fsync=on`), if the machine has the binaries. */
export async function startPostgres(): Promise<Started<PgServer>> {
  const found = await findPostgres()
  if (typeof found === 'string') return { ok: false, reason: found }
  const dir = tempDir('pg')
  if (found.runAs !== undefined) chownSync(dir, found.runAs.uid, found.runAs.gid)
  const data = join(dir, 'data')
  const halt = (mode: 'fast' | 'immediate') => pgCommand(found, 'pg_ctl', ['stop', '-w', '-D', data, '-m', mode])
  const crashStop = () => {
    const [file, argv] = halt('immediate')
    try {
      execFileSync(file, argv, { stdio: 'ignore' })
    } catch {
      // not running
    }
  }
  try {
    await runPg(found, 'initdb', ['-D', data, '-U', 'flowing', '--auth=trust', '-E', 'UTF8', '--locale=C', '-N'])
    const port = await freePort()
    const settings = [`-k ${dir}`, '-c listen_addresses=127.0.0.1', `-p ${port}`, '-c fsync=on']
    process.once('exit', crashStop)
    await runPg(found, 'pg_ctl', [
      'start',
      '-w',
      '-t',
      '30',
      '-D',
      data,
      '-l',
      join(dir, 'log'),
      '-o',
      settings.join(' '),
    ])
    const version = (await runPg(found, 'postgres', ['--version'])).trim()
    const stop = async () => {
      process.off('exit', crashStop)
      const [file, argv] = halt('fast')
      await exec(file, argv).catch(() => undefined)
      rmSync(dir, { recursive: true, force: true })
    }
    const description = `${version}, private server (initdb in a temp dir, fsync=on, synchronous_commit=on)`
    return { ok: true, server: { port, url: `postgres://flowing@127.0.0.1:${port}/postgres`, description, stop } }
  } catch (error) {
    crashStop()
    process.off('exit', crashStop)
    rmSync(dir, { recursive: true, force: true })
    return { ok: false, reason: `PostgreSQL did not start: ${reason(error)}` }
  }
}
