/**
 * `node --expose-gc dist/compare-builds.js --before <core index.js or checkout> --after <…>`: two builds
 * of `@flowing/core`, loaded from their `dist/` folders into one process, run interleaved on the
 * per-message path (streamed with integer and string keys, burst, features on, a refused `tryPost`, a
 * `request()` round trip) — before, after, before, after … over `--rounds` rounds after a warm-up
 * round, a full GC before every run. Prints the median rates of both, their ratio and its per-round
 * min–max; fails (exit 1) when a run handled another count than it posted, never on speed.
 *
 * @module
 */
import { execFileSync } from 'node:child_process'
import { existsSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { startBuildWorker } from './compare/build-worker.js'
import type * as CasesModule from './compare/cases.js'
import {
  type BuildNote,
  type CompareDoc,
  compareTable,
  everyRound,
  type PairResult,
  renderDoc,
} from './compare/report.js'
import { CASES, type CaseSpec, KEY_COUNT } from './compare/specs.js'
import { interleave } from './flow/rounds.js'
import { positiveInteger, UsageError } from './lib/cli.js'
import { ensureExposedGc } from './lib/gc.js'
import { describeMachine, formatMachine, producingCommand } from './lib/machine.js'
import { runSuite } from './lib/run-suite.js'
import { makeWorkload, type Workload } from './lib/workload.js'

const USAGE = `Usage: node --expose-gc benchmarks/dist/compare-builds.js --before <build> --after <build> [options]

  <build>          a built @flowing/core entry (<checkout>/packages/core/dist/index.js), or a
                   checkout's root (that file is taken); run \`npx tsc -b\` in the checkout first
  --n=<count>      messages (and refused calls) per run; request() round trips are N/10 (default 1,000,000)
  --rounds=<k>     interleaved rounds after the warm-up round (default 7)
  --only=<ids>     comma-separated substrings of case ids: ${CASES.map((c) => c.id).join(', ')}
  --isolate        run each build in a worker thread of its own (its own V8 isolate: heap, optimized
                   code and hidden classes apart); still one process, still turn about
  --write=<file>   also write the results as markdown (e.g. benchmarks/RESULTS-wiring.md)
  --help           this text

Relative paths are read from the directory the command was started in.`

const log = (line = ''): void => {
  process.stdout.write(`${line}\n`)
}

interface Options {
  readonly before: string
  readonly after: string
  readonly n: number
  readonly rounds: number
  readonly only: readonly string[]
  readonly write: string | undefined
  /** Each build in a worker thread of its own (its own V8 isolate). */
  readonly isolate: boolean
}

/** Where relative paths start: the invoking shell's directory, also under `pnpm run` (INIT_CWD). */
const baseDir = (): string => {
  const { INIT_CWD: invokedIn } = process.env
  return invokedIn ?? process.cwd()
}

const OPTIONS = {
  before: { type: 'string' },
  after: { type: 'string' },
  n: { type: 'string' },
  rounds: { type: 'string' },
  only: { type: 'string' },
  write: { type: 'string' },
  isolate: { type: 'boolean', default: false },
  help: { type: 'boolean', default: false },
} as const

function parseOptions(args: readonly string[]): Options | undefined {
  let values: ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>['values']
  try {
    values = parseArgs({ args: [...args], strict: true, options: OPTIONS }).values
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error))
  }
  if (values.help === true) return undefined
  const only = (values.only ?? '').split(',').filter((s) => s.trim() !== '')
  return {
    before: coreEntry('before', values.before),
    after: coreEntry('after', values.after),
    n: positiveInteger('n', values.n, 1_000_000),
    rounds: positiveInteger('rounds', values.rounds, 7),
    only: only.map((s) => s.trim()),
    write: values.write === undefined ? undefined : resolve(baseDir(), values.write),
    isolate: values.isolate === true,
  }
}

/** The absolute path of a build's core entry. @throws UsageError when it is missing */
function coreEntry(name: string, given: string | undefined): string {
  if (given === undefined) throw new UsageError(`Expected \`--${name}\` to name a build, got nothing`)
  const path = resolve(baseDir(), given)
  const file = existsSync(path) && statSync(path).isDirectory() ? join(path, 'packages/core/dist/index.js') : path
  if (!existsSync(file)) {
    throw new UsageError(
      `Expected \`--${name}\` to name a built core entry, got \`${given}\`: no file ${file} (run npx tsc -b)`,
    )
  }
  return file
}

/**
 * The commit of the checkout holding `file` (dirty when `packages/` has uncommitted changes), and when
 * its core was built: flagged when that is older than the last commit that touched `packages/`.
 */
function noteOf(name: BuildNote['name'], file: string): BuildNote {
  // `file` is <checkout>/packages/core/dist/index.js: `../..` from its folder is `packages/`.
  const git = (...args: string[]): string =>
    execFileSync('git', ['-C', dirname(file), ...args], { encoding: 'utf8', stdio: 'pipe' }).trim()
  let commit = 'unknown (not in a git checkout)'
  let committedMs = 0
  try {
    commit = git('rev-parse', 'HEAD')
    if (git('status', '--porcelain', '--untracked-files=no', '--', '../..') !== '') {
      commit += ' + uncommitted changes in packages/'
    }
    committedMs = Number(git('log', '-1', '--format=%ct', '--', '../..')) * 1000
  } catch {}
  // tsc -b rewrites the build info on every build, but not an unchanged index.js.
  const info = join(dirname(file), '../.tsbuild/tsconfig.tsbuildinfo')
  const builtMs = statSync(existsSync(info) ? info : file).mtimeMs
  const stale = builtMs < committedMs ? ' — **older than the last commit to packages/: rebuild with `npx tsc -b`**' : ''
  return { name, file, commit, built: `${new Date(builtMs).toISOString()}${stale}` }
}

interface Build {
  readonly note: BuildNote
  readonly runs: ReturnType<typeof CasesModule.buildRuns>
  close(): Promise<void>
}

async function loadBuild(name: BuildNote['name'], file: string, workload: Workload, isolate: boolean): Promise<Build> {
  if (isolate) {
    const worker = startBuildWorker(file, workload.n)
    return { note: noteOf(name, file), ...worker }
  }
  const core = (await import(pathToFileURL(file).href)) as CasesModule.CoreModule
  // A module instance of the cases per build: see cases.ts on why.
  const url = new URL(`./compare/cases.js?build=${name}`, import.meta.url)
  const cases = (await import(url.href)) as typeof CasesModule
  return { note: noteOf(name, file), runs: cases.buildRuns(core, workload), close: async () => {} }
}

/** One case on both builds, interleaved. */
async function comparePair(spec: CaseSpec, builds: readonly Build[], o: Options): Promise<PairResult> {
  const units = Math.max(1, Math.round(o.n * spec.share))
  log(`\n${spec.label}: ${units.toLocaleString('en-US')} ${spec.unit} per run`)
  const cases = builds.map((b) => ({
    id: `${b.note.name}:${spec.id}`,
    label: `${b.note.name.padEnd(6)} ${spec.label}`,
    run: b.runs[spec.id],
  }))
  const plan = { n: units, rounds: o.rounds, warmup: Math.max(1, Math.round(units / 20)), log }
  const [before, after] = await interleave(plan, cases)
  if (before === undefined || after === undefined) throw new Error('interleave lost a case')
  return { spec, units, before, after }
}

/** Writes the results file: the command that would redo this run, the builds, the tables. */
function writeResults(
  file: string,
  o: Options,
  run: Pick<CompareDoc, 'machine' | 'builds' | 'seconds' | 'summary'> & { readonly results: readonly PairResult[] },
): void {
  const only = o.only.length === 0 ? [] : [`--only=${o.only.join(',')}`]
  const isolate = o.isolate ? ['--isolate'] : []
  const argv = [`--before=${o.before}`, `--after=${o.after}`, `--n=${o.n}`, `--rounds=${o.rounds}`, ...only, ...isolate]
  const command = producingCommand([...argv, `--write=${file}`], 'compare-builds')
  const cases = run.results.map((r) => r.spec)
  const { machine, builds, seconds, summary } = run
  const doc = { command, machine, builds, seconds, summary, date: new Date(), rounds: o.rounds, cases }
  writeFileSync(file, renderDoc({ ...doc, everyRound: everyRound(run.results) }))
}

async function main(args: string[]): Promise<void> {
  const o = parseOptions(args)
  if (o === undefined) return log(USAGE)
  const specs = CASES.filter((c) => o.only.length === 0 || o.only.some((s) => c.id.includes(s)))
  if (specs.length === 0) throw new UsageError(`Expected \`--only\` to match a case id, got \`${o.only.join(',')}\``)
  if (!ensureExposedGc()) return
  const started = performance.now()
  const machine = formatMachine(describeMachine())
  const workload = makeWorkload(o.n, KEY_COUNT, 'random')
  const builds = [
    await loadBuild('before', o.before, workload, o.isolate),
    await loadBuild('after', o.after, workload, o.isolate),
  ]
  log(`compare-builds: machine ${machine}`)
  for (const b of builds) log(`  ${b.note.name}: ${b.note.commit} (${b.note.file}, built ${b.note.built})`)
  const results: PairResult[] = []
  try {
    for (const spec of specs) results.push(await comparePair(spec, builds, o))
  } finally {
    for (const b of builds) await b.close()
  }
  const summary = compareTable(results)
  const rounds = `${o.rounds} round${o.rounds === 1 ? '' : 's'}`
  log(`\nafter ÷ before, as rates (above 1× the after build is faster), ${rounds}:\n\n${summary}`)
  if (o.write !== undefined) {
    const seconds = (performance.now() - started) / 1000
    writeResults(o.write, o, { machine, builds: builds.map((b) => b.note), seconds, results, summary })
    log(`\nWrote ${o.write}`)
  }
  log(`All self-checks passed (${((performance.now() - started) / 1000).toFixed(1)} s).`)
}

runSuite('compare-builds', USAGE, main)
