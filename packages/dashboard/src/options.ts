/**
 * The options of {@link createDashboard} and their checks: a typo, a bad base path or a loop that is
 * not a loop throw `InvalidArgumentError` before anything is mounted.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http'
import { InvalidArgumentError } from '@flowing/core'
import { argumentChecks } from '@flowing/errors'
import { type DashboardLoop, isDashboardLoop, LoopSource } from './collect/loop-source.js'

/**
 * What a request asks to do: `view` (any read: pages, JSON, the live stream) or one of the actions.
 *
 * @group Dashboard
 */
export type DashboardAction =
  | 'view'
  | 'replay'
  | 'purge'
  | 'cancel'
  | 'pause'
  | 'resume'
  | 'resize'
  | 'open-circuit'
  | 'close-circuit'

/**
 * Every action a dashboard can take (all but `view`), in the order the UI offers them.
 *
 * @group Dashboard
 */
export const ACTIONS: readonly Exclude<DashboardAction, 'view'>[] = Object.freeze([
  'replay',
  'purge',
  'cancel',
  'pause',
  'resume',
  'resize',
  'open-circuit',
  'close-circuit',
])

/**
 * The app's decision on one request: may it do `action`? Called for every request with `view`, and
 * for every action with its name. May return a promise; a throw or a rejection counts as `false`.
 *
 * @group Dashboard
 */
export type Authorize = (req: IncomingMessage, action: DashboardAction) => boolean | Promise<boolean>

/**
 * Rewrites a payload before the dashboard shows it (with `payloads: 'shown'`): return what may be
 * shown — a copy with secrets masked, a summary. A throw shows `[redactor threw]`.
 *
 * @group Dashboard
 */
export type Redactor = (payload: unknown, type: string) => unknown

/**
 * Options of {@link createDashboard}.
 *
 * @group Dashboard
 */
export interface DashboardOptions {
  /**
   * The loops to show, by name — `{ orders: loop, mail: natsLoop }` — or one loop (named `loop`).
   * A `@flowing/nats` loop shows its process's local loop and its partitions.
   */
  readonly loops: DashboardLoop | Readonly<Record<string, DashboardLoop>>
  /**
   * Where the dashboard is mounted: requests under it are answered, others passed to `next` (or
   * answered 404 without one). `/` alone mounts it at the root.
   * @defaultValue `'/flowing'`
   */
  readonly basePath?: string
  /**
   * The app's access decision. Without it the dashboard is **read-only**: every action is refused
   * (403) and the page shows no action controls.
   */
  readonly authorize?: Authorize
  /**
   * `hidden`: payloads never leave the server (the page shows their size); `shown`: payloads are
   * shown, through `redact` when it names their type.
   * @defaultValue `'hidden'`
   */
  readonly payloads?: 'hidden' | 'shown'
  /** Per-type redactors applied to shown payloads; `'*'` applies to every type without its own. */
  readonly redact?: Readonly<Record<string, Redactor>>
  /**
   * Origins (scheme://host[:port]) besides the request's own host that may send actions — e.g. the
   * public origin behind a proxy that rewrites `Host`.
   * @defaultValue `[]`
   */
  readonly allowedOrigins?: readonly string[]
  /**
   * Seconds of history the charts keep (one point a second while a page is open).
   * @defaultValue `300`
   */
  readonly historySeconds?: number
  /**
   * Thread pools to show by name (`@flowing/threads`); the default pool shows by itself once used.
   * @defaultValue `{}`
   */
  readonly threads?: Readonly<Record<string, { stats(): unknown }>>
  /**
   * The key of the CSRF tokens (at least 32 characters): give the same one to every replica of an app
   * behind a load balancer, so that a page's token is good on all of them. Keep it secret.
   * @defaultValue a random key per dashboard (a page's actions must reach the replica that served it)
   */
  readonly secret?: string
}

/** The options, checked, with their defaults. */
export interface ResolvedOptions {
  readonly loops: ReadonlyMap<string, LoopSource>
  readonly basePath: string
  readonly authorize: Authorize | undefined
  readonly payloads: 'hidden' | 'shown'
  readonly redact: Readonly<Record<string, Redactor>>
  readonly allowedOrigins: readonly string[]
  readonly historySeconds: number
  readonly threads: ReadonlyMap<string, { stats(): unknown }>
  readonly secret: string | undefined
}

const KNOWN = [
  'loops',
  'basePath',
  'authorize',
  'payloads',
  'redact',
  'allowedOrigins',
  'historySeconds',
  'threads',
  'secret',
]
const check = argumentChecks(InvalidArgumentError)
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
// Segments of letters, digits and `._~-`, none of them `.` or `..`.
const SEGMENT = '(?!\\.{1,2}(?:/|$))[A-Za-z0-9._~-]+'
const BASE = new RegExp(`^/(?:${SEGMENT}(?:/${SEGMENT})*)?$`)
const ORIGIN = /^https?:\/\/[^/\s]+$/

/**
 * Checks `options` and fills the defaults.
 * @throws InvalidArgumentError for an unknown option, a bad value, a loop that is not a Flowing loop
 */
export function resolveOptions(options: unknown): ResolvedOptions {
  const o = check.snapshot('options', options)
  check.knownKeys('options', o, KNOWN)
  const basePath = o['basePath'] ?? '/flowing'
  if (typeof basePath !== 'string' || !BASE.test(basePath)) {
    throw new InvalidArgumentError('options.basePath', "a path such as '/flowing' (no trailing slash)", basePath)
  }
  return {
    loops: loopsOf(o['loops']),
    basePath: basePath === '/' ? '' : basePath,
    authorize: o['authorize'] === undefined ? undefined : check.fn<Authorize>('options.authorize', o['authorize']),
    payloads: check.oneOf('options.payloads', o['payloads'] ?? 'hidden', ['hidden', 'shown'], { suggest: true }),
    redact: functionsOf('options.redact', o['redact']) as Record<string, Redactor>,
    allowedOrigins: originsOf(o['allowedOrigins']),
    historySeconds: check.integer('options.historySeconds', o['historySeconds'] ?? 300, { min: 10, max: 3600 }),
    threads: new Map(Object.entries(objectsOf('options.threads', o['threads']))),
    secret: secretOf(o['secret']),
  }
}

function loopsOf(value: unknown): Map<string, LoopSource> {
  if (isDashboardLoop(value)) return new Map([['loop', sourceOf('options.loops', 'loop', value)]])
  const named = check.snapshot('options.loops', value)
  const loops = new Map<string, LoopSource>()
  for (const [name, loop] of Object.entries(named)) {
    if (!NAME.test(name)) throw new InvalidArgumentError('options.loops', 'names of letters, digits, ., _ and -', name)
    loops.set(name, sourceOf(`options.loops.${name}`, name, loop))
  }
  if (loops.size === 0) throw new InvalidArgumentError('options.loops', 'a loop, or at least one named loop', value)
  return loops
}

// What the dashboard reads of a loop, read once now: a loop whose getters throw is refused here.
function sourceOf(argument: string, name: string, loop: unknown): LoopSource {
  if (!isDashboardLoop(loop)) throw new InvalidArgumentError(argument, 'a Flowing loop', loop)
  try {
    return new LoopSource(name, loop)
  } catch (thrown) {
    throw new InvalidArgumentError(argument, 'a Flowing loop (reading it threw)', loop, { cause: thrown })
  }
}

function functionsOf(argument: string, value: unknown): Record<string, unknown> {
  const all = value === undefined ? {} : check.snapshot(argument, value)
  for (const [name, fn] of Object.entries(all)) check.fn(`${argument}.${name}`, fn)
  return all
}

function objectsOf(argument: string, value: unknown): Record<string, { stats(): unknown }> {
  const all = value === undefined ? {} : check.snapshot(argument, value)
  for (const [name, pool] of Object.entries(all)) {
    const stats =
      pool !== null && typeof pool === 'object'
        ? check.readably(`${argument}.${name}`, () => (pool as { stats?: unknown }).stats, pool)
        : undefined
    if (typeof stats !== 'function') throw new InvalidArgumentError(`${argument}.${name}`, 'a ThreadPool', pool)
  }
  return all as Record<string, { stats(): unknown }>
}

function originsOf(value: unknown): string[] {
  if (value === undefined) return []
  if (!Array.isArray(value)) throw new InvalidArgumentError('options.allowedOrigins', 'an array of origins', value)
  return value.map((origin, i) => {
    const rule = "an origin such as 'https://ops.example.com' (no wildcard, no path)"
    if (typeof origin !== 'string' || !ORIGIN.test(origin) || origin.includes('*')) {
      throw new InvalidArgumentError(`options.allowedOrigins[${i}]`, rule, origin)
    }
    return new URL(origin).origin // as a browser sends it: lower case, no default port
  })
}

function secretOf(value: unknown): string | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'string' || value.length < 32) {
    throw new InvalidArgumentError('options.secret', 'a string of at least 32 characters', value)
  }
  return value
}
