/**
 * Where and how a run happened, for the results file: figures are only comparable on one machine.
 *
 * @module
 */
import { execFileSync } from 'node:child_process'
import os from 'node:os'

/** Facts about the machine and runtime. */
export interface Machine {
  readonly cpu: string
  readonly cores: number
  readonly memoryGiB: number
  readonly os: string
  readonly node: string
  readonly v8: string
  readonly pointerCompression: boolean
  /** 1-minute load average when the run started: above the core count, other work competed for CPU. */
  readonly loadAverage: number
}

/** Reads the machine facts. */
export function describeMachine(): Machine {
  const cpus = os.cpus()
  // Not in @types/node's declared variables; present in every official build.
  const variables = process.config.variables as { readonly v8_enable_pointer_compression?: unknown }
  return {
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    v8: process.versions.v8,
    pointerCompression: variables.v8_enable_pointer_compression === 1,
    loadAverage: os.loadavg()[0] ?? 0,
  }
}

/** One line: `AMD EPYC × 2 cores, 24 GiB, Linux 6.1 x64, Node v20.20.2 (V8 …, no pointer compression); load …`. */
export function formatMachine(m: Machine): string {
  const compression = m.pointerCompression ? 'pointer compression' : 'no pointer compression'
  return `${m.cpu} × ${m.cores} cores, ${m.memoryGiB} GiB, ${m.os}, Node ${m.node} (V8 ${m.v8}, ${compression}); load average ${m.loadAverage.toFixed(2)} at start`
}

/**
 * The command that produced this run, as a reader would retype it. Under `pnpm bench` (the `bench`
 * lifecycle, no extra arguments) that is the root script, which builds first; `bench:<suite>` names
 * the suite's own script.
 *
 * @param argv - the script's arguments
 * @param script - the entry point's name in `dist/`, e.g. `core-throughput`
 */
export function producingCommand(argv: readonly string[], script = 'core-throughput'): string {
  const { npm_lifecycle_event: lifecycle } = process.env
  if (lifecycle === 'bench' && argv.length === 0) {
    return `\`npx -y pnpm@12.4.2 bench\` from the repository root (runs \`tsc -b\`, then the suites in \`benchmarks/\`, this one as \`node dist/${script}.js\`)`
  }
  if (lifecycle?.startsWith('bench:') === true && argv.length === 0) {
    return `\`npx -y pnpm@12.4.2 --filter @flowing/benchmarks ${lifecycle}\` after \`npx tsc -b\` (runs \`node dist/${script}.js\`)`
  }
  const args = argv.length === 0 ? '' : ` ${argv.join(' ')}`
  return `\`node --expose-gc benchmarks/dist/${script}.js${args}\` from the repository root, after \`npx tsc -b\``
}

/**
 * The commit the figures belong to: `abc1234`, `abc1234 + uncommitted changes`, or `unknown` outside
 * a git checkout.
 */
export function codeRevision(): string {
  try {
    const git = (...args: string[]): string => execFileSync('git', args, { encoding: 'utf8', stdio: 'pipe' }).trim()
    const head = git('rev-parse', '--short', 'HEAD')
    return git('status', '--porcelain', '--untracked-files=no') === '' ? head : `${head} + uncommitted changes`
  } catch {
    return 'unknown'
  }
}
