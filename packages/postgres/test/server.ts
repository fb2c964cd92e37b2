/**
 * A private PostgreSQL server per test file, never a mock: the global setup runs `initdb` once into a
 * template directory; each file copies it, starts its own server on a free port (`pg_ctl`, a socket
 * directory of its own, `fsync=off` for speed unless asked otherwise) and makes databases on it.
 * Running as root, every PostgreSQL binary runs as the `postgres` user (initdb and the server refuse
 * root). Without PostgreSQL binaries the suites skip, saying why.
 */
import { execFile } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'

const exec = promisify(execFile)

/** Where the binaries are and whom they run as. */
export interface Postgres {
  /** The directory of `initdb`, `pg_ctl`, `postgres`. */
  readonly bin: string
  /** The user to run them as (uid and gid), when the tests run as root. */
  readonly runAs: { readonly name: string; readonly uid: number; readonly gid: number } | undefined
}

/** What the global setup hands each file: a template data directory, or why there is none. */
export type Provided =
  | { readonly ok: true; readonly postgres: Postgres; readonly template: string }
  | { readonly ok: false; readonly reason: string }

/** The superuser `initdb` creates (trust authentication over 127.0.0.1 and the socket). */
export const SUPERUSER = 'flowing'

/** Finds the binaries: on `PATH`, or in `/usr/lib/postgresql/<major>/bin` (the newest). */
export async function findPostgres(): Promise<Postgres | { readonly reason: string }> {
  const candidates = (process.env['PATH'] ?? '').split(delimiter).filter((d) => d !== '')
  const lib = '/usr/lib/postgresql'
  if (existsSync(lib)) {
    const majors = readdirSync(lib).sort((a, b) => Number(b) - Number(a))
    candidates.push(...majors.map((m) => join(lib, m, 'bin')))
  }
  const bin = candidates.find((d) => ['initdb', 'pg_ctl', 'postgres'].every((b) => existsSync(join(d, b))))
  if (bin === undefined) {
    return { reason: 'no PostgreSQL binaries (initdb, pg_ctl, postgres) on PATH nor in /usr/lib/postgresql/*/bin' }
  }
  if (process.getuid?.() !== 0) return { bin, runAs: undefined }
  try {
    const [uid, gid] = await Promise.all([exec('id', ['-u', 'postgres']), exec('id', ['-g', 'postgres'])])
    return { bin, runAs: { name: 'postgres', uid: Number(uid.stdout), gid: Number(gid.stdout) } }
  } catch {
    return { reason: 'the tests run as root, and initdb refuses root, but there is no `postgres` user to run it as' }
  }
}

/** Runs a PostgreSQL binary (as the `postgres` user if need be). */
export async function runBinary(postgres: Postgres, name: string, args: readonly string[]): Promise<string> {
  const command = join(postgres.bin, name)
  const [file, argv] =
    postgres.runAs === undefined ? [command, args] : ['runuser', ['-u', postgres.runAs.name, '--', command, ...args]]
  try {
    const { stdout } = await exec(file, argv, { maxBuffer: 16 * 1024 * 1024 })
    return stdout
  } catch (error) {
    const e = error as { stderr?: string; stdout?: string; message: string }
    throw new Error(`${name} ${args.join(' ')} failed: ${e.stderr || e.stdout || e.message}`)
  }
}

/** A directory the server's user owns. */
export function ownedTempDir(postgres: Postgres, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  if (postgres.runAs !== undefined) chownSync(dir, postgres.runAs.uid, postgres.runAs.gid)
  return dir
}

/** `initdb` into a new directory: the template every file's server copies. */
export async function makeTemplate(postgres: Postgres): Promise<string> {
  const dir = ownedTempDir(postgres, 'flowing-pg-template-')
  const data = join(dir, 'data')
  await runBinary(postgres, 'initdb', ['-D', data, '-U', SUPERUSER, '--auth=trust', '-E', 'UTF8', '--locale=C', '-N'])
  return data
}

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

/** One running server. */
export class PgServer {
  readonly #postgres: Postgres
  readonly #dir: string
  readonly #data: string
  readonly #fsync: boolean
  #port = 0

  private constructor(postgres: Postgres, dir: string, fsync: boolean) {
    this.#postgres = postgres
    this.#dir = dir
    this.#data = join(dir, 'data')
    this.#fsync = fsync
  }

  /** Copies the template and starts a server on a free port. */
  static async start(provided: Provided & { ok: true }, options: { fsync?: boolean } = {}): Promise<PgServer> {
    const { postgres, template } = provided
    const dir = ownedTempDir(postgres, 'flowing-pg-')
    const server = new PgServer(postgres, dir, options.fsync ?? false)
    const copy =
      postgres.runAs === undefined
        ? ['cp', ['-a', template, server.#data]]
        : ['runuser', ['-u', postgres.runAs.name, '--', 'cp', '-a', template, server.#data]]
    await exec(copy[0] as string, copy[1] as string[])
    for (let attempt = 1; ; attempt++) {
      server.#port = await freePort()
      try {
        await server.resume()
        return server
      } catch (error) {
        if (attempt === 3) throw error // the port was taken in between, three times: something else is wrong
      }
    }
  }

  /** Its port on 127.0.0.1. */
  get port(): number {
    return this.#port
  }

  /** The connection string of `database`. */
  url(database = 'postgres'): string {
    return `postgres://${SUPERUSER}@127.0.0.1:${this.#port}/${database}`
  }

  /** Creates a database and returns its connection string. */
  async createDatabase(name: string): Promise<string> {
    const client = new pg.Client({ connectionString: this.url() })
    await client.connect()
    try {
      await client.query(`CREATE DATABASE "${name}"`)
    } finally {
      await client.end()
    }
    return this.url(name)
  }

  /** Starts the server again (after {@link PgServer.halt}), on the same port. */
  async resume(): Promise<void> {
    const settings = [
      `-k ${this.#dir}`,
      '-c listen_addresses=127.0.0.1',
      `-p ${this.#port}`,
      `-c fsync=${this.#fsync ? 'on' : 'off'}`,
      '-c max_connections=200',
    ]
    await runBinary(this.#postgres, 'pg_ctl', [
      'start',
      '-w',
      '-t',
      '30',
      '-D',
      this.#data,
      '-l',
      join(this.#dir, 'log'),
      '-o',
      settings.join(' '),
    ])
  }

  /** Stops the server: `fast` disconnects every client and shuts down cleanly, `immediate` is a crash. */
  async halt(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    await runBinary(this.#postgres, 'pg_ctl', ['stop', '-w', '-t', '30', '-D', this.#data, '-m', mode])
  }

  /** Stops the server and removes its directory. */
  async destroy(): Promise<void> {
    try {
      await this.halt('immediate')
    } catch {
      // already stopped
    }
    rmSync(this.#dir, { recursive: true, force: true })
  }
}
