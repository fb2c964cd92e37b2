/**
 * The command line of `flowing-tune`: parsed into {@link TuneOptions}, each flag checked with a message
 * in one fixed shape (``Expected `--workers` to be …, got `…` ``).
 *
 * @module
 */
import { TuneError } from './errors.js'

/**
 * Everything one sweep needs. Durations in ms, rates in messages per second.
 *
 * @group Command line
 */
export interface TuneOptions {
  /** Path of the user's module (`.js`, `.mjs` or `.ts`). */
  readonly module: string
  /** Worker counts to try, ascending, distinct. */
  readonly workers: readonly number[]
  /**
   * Thread counts to try (ascending, distinct): the worker sweep runs once per count, on a default
   * `@flowing/threads` pool of that many threads; `undefined` = no thread sweep.
   */
  readonly threads: readonly number[] | undefined
  /** Length of one measured trial. */
  readonly durationMs: number
  /** Warm-up before the trials of each worker count (results discarded). */
  readonly warmupMs: number
  /** Offered load for an open-loop run; `undefined` = closed loop (keep 2 × workers in flight). */
  readonly rate: number | undefined
  /** The lifecycle p99 a recommendation must meet. */
  readonly p99Ms: number
  /** Measured trials per worker count; the median is used. */
  readonly trials: number
  /** Throughput within this fraction of the peak counts as "at the peak" (0.05 = 5 %). */
  readonly tolerance: number
  /** Directory for the report (`tune-report.md`) and charts; `undefined` = print only. */
  readonly out: string | undefined
  /** Queue capacity of each trial's loop. */
  readonly capacity: number
  /** Print progress lines. */
  readonly quiet: boolean
}

/**
 * What {@link tune} takes: the module, and any option of {@link TuneOptions} (the rest defaulted).
 *
 * @group Command line
 */
export type TuneInput = Partial<TuneOptions> & { readonly module: string }

/**
 * The options with the command line's defaults for what `input` leaves out.
 * @throws TuneError (exit code 2) for a worker list, count or duration out of range
 *
 * @group Command line
 */
export function resolveTuneOptions(input: TuneInput): TuneOptions {
  const durationMs = input.durationMs ?? 10_000
  const options: TuneOptions = {
    workers: [1, 2, 4, 8, 16, 32],
    threads: undefined,
    warmupMs: Math.min(2000, durationMs * 0.2),
    rate: undefined,
    p99Ms: 50,
    trials: 3,
    tolerance: 0.05,
    out: undefined,
    capacity: 10_000,
    quiet: false,
    ...withoutUndefined(input),
    durationMs,
  }
  parseWorkers(options.workers.join(','))
  parseThreads(options.threads?.join(','))
  if (!(options.durationMs > 0 && options.warmupMs >= 0 && options.p99Ms > 0)) {
    throw new TuneError(
      'ERR_FLOWING_TUNE_USAGE',
      'Expected durationMs and p99Ms to be positive and warmupMs not negative',
    )
  }
  parseInteger('trials', String(options.trials), 1, 100)
  const sorted = (counts: readonly number[]) => [...new Set(counts)].sort((a, b) => a - b)
  return {
    ...options,
    workers: sorted(options.workers),
    threads: options.threads === undefined ? undefined : sorted(options.threads),
  }
}

function withoutUndefined(input: TuneInput): TuneInput {
  return Object.fromEntries(
    Object.entries(input).filter(([k, v]) => v !== undefined || k === 'rate' || k === 'out' || k === 'threads'),
  ) as TuneInput
}

/**
 * Usage text, printed by `--help` and after a bad command line.
 *
 * @group Command line
 */
export const USAGE = `Usage: flowing-tune <module.(js|mjs|ts)> [options]
       flowing-tune --smoke [module]

Sweeps worker counts on your own handlers and recommends the smallest count that reaches the
throughput plateau while meeting the p99 target.

  --workers <list>    worker counts to try            (default 1,2,4,8,16,32)
  --threads <list>    also size @flowing/threads: the worker sweep once per thread count, on a
                      default thread pool of that size (threaded() handlers without a pool)
  --duration <time>   length of each trial, e.g. 10s   (default 10s)
  --warmup <time>     warm-up per worker count         (default 20 % of --duration, at most 2s)
  --trials <n>        trials per worker count (median) (default 3)
  --rate <N/s>        open-loop offered load; omit for closed loop (2 × workers in flight)
  --p99 <time>        lifecycle p99 target, e.g. 50ms  (default 50ms)
  --tolerance <pct>   "at the peak" means within this  (default 5%)
  --capacity <n>      queue capacity of the loop       (default 10000)
  --out <dir>         write tune-report.md, throughput.svg, p99.svg there
  --quiet             no progress lines
  --smoke [module]    knee-finder and input checks, then a tiny sweep of the module (default: a bundled one)

The module's default export: { register(loop) { loop.on(...) }, sample(i) { return { type, payload, key?, priority? } } }
.ts modules are loaded through tsx; see the @flowing/tune README.`

const flag = (name: string, rule: string, got: string): TuneError =>
  new TuneError('ERR_FLOWING_TUNE_USAGE', `Expected \`--${name}\` to be ${rule}, got \`${got}\``)

/**
 * Parses `250ms`, `2s`, `1.5s`, `1m` or a bare number of ms.
 *
 * @group Command line
 */
export function parseDuration(name: string, text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text.trim())
  const value = m ? Number(m[1]) * (m[2] === 's' ? 1000 : m[2] === 'm' ? 60_000 : 1) : Number.NaN
  if (!(value > 0) || !Number.isFinite(value)) throw flag(name, 'a positive duration such as `500ms` or `10s`', text)
  return value
}

function parseWorkers(text: string): number[] {
  return parseCounts('workers', text, 4096)
}

function parseThreads(text: string | undefined): number[] | undefined {
  return text === undefined ? undefined : parseCounts('threads', text, 256)
}

function parseCounts(name: string, text: string, max: number): number[] {
  const parts = text.split(',').map((s) => s.trim())
  const counts = parts.map(Number)
  if (parts.length === 0 || counts.some((n) => !Number.isInteger(n) || n < 1 || n > max)) {
    throw flag(name, `a comma-separated list of integers from 1 to ${max}`, text)
  }
  return [...new Set(counts)].sort((a, b) => a - b)
}

function parseRate(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(?:\/s)?$/.exec(text.trim())
  const value = m ? Number(m[1]) : Number.NaN
  if (!(value > 0)) throw flag('rate', 'a positive rate such as `2000/s`', text)
  return value
}

function parseInteger(name: string, text: string, min: number, max: number): number {
  const value = Number(text)
  if (!Number.isInteger(value) || value < min || value > max) throw flag(name, `an integer from ${min} to ${max}`, text)
  return value
}

function parseTolerance(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(%)?$/.exec(text.trim())
  const value = m ? Number(m[1]) / (m[2] === '%' || Number(m[1]) >= 1 ? 100 : 1) : Number.NaN
  if (!(value >= 0 && value < 1)) throw flag('tolerance', 'a percentage from 0 to 99, such as `5%`', text)
  return value
}

const VALUE_FLAGS = new Set([
  'workers',
  'threads',
  'duration',
  'warmup',
  'trials',
  'rate',
  'p99',
  'tolerance',
  'capacity',
  'out',
])

/**
 * What the command line asks for: a sweep, the smoke run, or help.
 *
 * @group Command line
 */
export type Command =
  | { readonly kind: 'tune'; readonly options: TuneOptions }
  | { readonly kind: 'smoke'; readonly module: string | undefined }
  | { readonly kind: 'help' }

/**
 * Parses the arguments after `node main.js`.
 * @throws TuneError (exit code 2) naming the flag, the rule and the value
 *
 * @group Command line
 */
export function parseArgs(argv: readonly string[]): Command {
  const values = new Map<string, string>()
  const positional: string[] = []
  let smoke = false
  let quiet = false
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string
    if (arg === '--help' || arg === '-h') return { kind: 'help' }
    if (arg === '--smoke') smoke = true
    else if (arg === '--quiet') quiet = true
    else if (arg.startsWith('--')) {
      const eq = arg.indexOf('=')
      const name = arg.slice(2, eq === -1 ? undefined : eq)
      if (!VALUE_FLAGS.has(name))
        throw new TuneError('ERR_FLOWING_TUNE_USAGE', `Unknown option \`${arg}\` (see --help)`)
      const value = eq === -1 ? argv[++i] : arg.slice(eq + 1)
      if (value === undefined || value === '' || (eq === -1 && value.startsWith('--'))) {
        throw flag(name, 'followed by a value', value ?? '')
      }
      values.set(name, value)
    } else positional.push(arg)
  }
  if (smoke) {
    if (positional.length > 1)
      throw new TuneError('ERR_FLOWING_TUNE_USAGE', `--smoke takes at most one module, got ${positional.join(' ')}`)
    return { kind: 'smoke', module: positional[0] }
  }
  if (positional.length !== 1) {
    throw new TuneError(
      'ERR_FLOWING_TUNE_USAGE',
      positional.length === 0
        ? 'Missing the handler module: flowing-tune ./my-handlers.js'
        : `Expected one module, got ${positional.length}: ${positional.join(' ')}`,
    )
  }
  const get = (name: string): string | undefined => values.get(name)
  const durationMs = parseDuration('duration', get('duration') ?? '10s')
  const warmup = get('warmup')
  const rate = get('rate')
  return {
    kind: 'tune',
    options: {
      module: positional[0] as string,
      workers: parseWorkers(get('workers') ?? '1,2,4,8,16,32'),
      threads: parseThreads(get('threads')),
      durationMs,
      warmupMs: warmup === undefined ? Math.min(2000, durationMs * 0.2) : parseDuration('warmup', warmup),
      rate: rate === undefined ? undefined : parseRate(rate),
      p99Ms: parseDuration('p99', get('p99') ?? '50ms'),
      trials: parseInteger('trials', get('trials') ?? '3', 1, 100),
      tolerance: parseTolerance(get('tolerance') ?? '5%'),
      out: get('out'),
      capacity: parseInteger('capacity', get('capacity') ?? '10000', 1, 10_000_000),
      quiet,
    },
  }
}
