/**
 * The packed artifacts, as a user outside the monorepo gets them: packs every public package with
 * pnpm (the one packer that rewrites `workspace:` ranges), installs the tarballs with plain npm into a
 * temporary app, and runs an ESM import, a CommonJS `require()` (Node's `require(esm)`), and a
 * TypeScript compile with `skipLibCheck: false` under `node16` and `bundler` resolution against them;
 * then publint and arethetypeswrong on every tarball, and a compile of the packages whose types need no
 * Node.js types without `@types/node` (docs/release.md); then the installed `flowing-tune` bin on a
 * small handler module. Before all that, every source map a tarball's files name must resolve inside
 * it, sources included (scripts/pack/source-maps.ts). Needs a build first (`tsc -b`). Run:
 * `pnpm run check:pack`; `--keep` leaves the app for a look.
 *
 * @module
 */
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { checkConsumers, checkTuneBin } from './pack/consumers.js'
import { run } from './pack/run.js'
import { checkSourceMaps } from './pack/source-maps.js'

const root = resolve(import.meta.dirname, '..')

/** A public package of the workspace. */
export interface PublicPackage {
  readonly name: string
  readonly dir: string
}

/** Every package under packages/ that is not private. */
export function publicPackages(): PublicPackage[] {
  const dir = join(root, 'packages')
  return readdirSync(dir)
    .map((entry) => join(dir, entry))
    .flatMap((pkgDir) => {
      let manifest: { name: string; private?: boolean }
      try {
        manifest = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'))
      } catch {
        return []
      }
      return manifest.private === true ? [] : [{ name: manifest.name, dir: pkgDir }]
    })
    .sort((a, b) => a.name.localeCompare(b.name))
}

// pnpm as the test run found it (`npm_execpath` under `pnpm run`), else the pinned version through npx.
function pnpm(args: string[], cwd: string, step: string): string {
  const exec = process.env['npm_execpath']
  if (exec?.includes('pnpm')) {
    // pnpm ships either as a script (run it with this Node) or as a native executable (run it as is).
    const script = /\.[cm]?js$/.test(exec)
    return script ? run(step, process.execPath, [exec, ...args], cwd) : run(step, exec, args, cwd)
  }
  return run(step, 'npx', ['-y', 'pnpm@12.4.2', ...args], cwd)
}

/** Packs every public package into `into`; returns the tarballs' paths. */
export function packAll(packages: readonly PublicPackage[], into: string): string[] {
  for (const p of packages) pnpm(['pack', '--pack-destination', into], p.dir, `pnpm pack of ${p.name}`)
  return readdirSync(into)
    .filter((f) => f.endsWith('.tgz'))
    .map((f) => join(into, f))
}

/**
 * A temporary app outside the repository with every public package installed from its tarball by
 * plain npm (and `@types/node`, which the packages' types use). Returns the app's directory.
 */
export function installedApp(): { dir: string; packages: PublicPackage[] } {
  const base = mkdtempSync(join(tmpdir(), 'flowing-pack-'))
  const tarballs = join(base, 'tarballs')
  const app = join(base, 'app')
  mkdirSync(tarballs)
  mkdirSync(app)
  const packages = publicPackages()
  const files = packAll(packages, tarballs)
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'packed-app', private: true, type: 'module' }))
  const npmArgs = ['install', '--no-audit', '--no-fund', '--loglevel=error', ...files, '@types/node@^20.19.0']
  run('npm install of the tarballs', 'npm', npmArgs, app)
  return { dir: app, packages }
}

// What the ESM app does: imports every package, then runs a real loop to its end.
function esmApp(packages: readonly PublicPackage[]): string {
  const imports = packages.map((p, i) => `import * as p${i} from '${p.name}'`).join('\n')
  const checks = packages
    .map((p, i) => `if (Object.keys(p${i}).length === 0) throw new Error('${p.name}: no exports')`)
    .join('\n')
  return `${imports}
${checks}
const loop = p${packages.findIndex((p) => p.name === '@flowing/core')}.createLoop({ logger: false })
let ran = 0
loop.on('job', () => { ran++ })
loop.start()
for (let i = 0; i < 10; i++) loop.post('job', i, { key: i % 3, headers: { 'x-n': String(i) } })
await loop.stop({ drain: true })
if (ran !== 10) throw new Error('ran ' + ran + ' of 10')
console.log('esm ok')
`
}

// What the CommonJS app does: requires every package (Node's require(esm)).
function cjsApp(packages: readonly PublicPackage[]): string {
  return `${packages
    .map((p) => `if (typeof require('${p.name}') !== 'object') throw new Error('${p.name}: require failed')`)
    .join('\n')}
console.log('cjs ok')
`
}

// The TypeScript consumer: imports every package and uses core's types.
function tsApp(packages: readonly PublicPackage[]): string {
  return `${packages.map((p, i) => `import * as p${i} from '${p.name}'`).join('\n')}
import { createLoop, type Message } from '@flowing/core'
interface Messages { job: { n: number } }
const loop = createLoop<Messages>()
loop.on('job', (m: Message<Messages, 'job'>) => void m.payload.n)
export const all = [${packages.map((_, i) => `p${i}`).join(', ')}]
`
}

function tsconfig(module: string, moduleResolution: string): string {
  const compilerOptions = {
    target: 'es2022',
    module,
    moduleResolution,
    strict: true,
    skipLibCheck: false,
    noEmit: true,
    types: ['node'],
  }
  return JSON.stringify({ compilerOptions, files: ['index.ts'] })
}

/** Runs every check on an installed app. */
export function checkApp(dir: string, packages: readonly PublicPackage[]): void {
  writeFileSync(join(dir, 'esm.mjs'), esmApp(packages))
  writeFileSync(join(dir, 'cjs.cjs'), cjsApp(packages))
  writeFileSync(join(dir, 'index.ts'), tsApp(packages))
  run('the ESM app', process.execPath, ['esm.mjs'], dir)
  run('the CommonJS require()', process.execPath, ['cjs.cjs'], dir)
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc')
  for (const [module, resolution] of [
    ['node16', 'node16'],
    ['esnext', 'bundler'],
  ] as const) {
    writeFileSync(join(dir, `tsconfig.${resolution}.json`), tsconfig(module, resolution))
    run(`the TypeScript compile (${resolution})`, process.execPath, [tsc, '-p', `tsconfig.${resolution}.json`], dir)
  }
  checkConsumers(dir, tsc)
}

/**
 * Refuses to pack a package whose build is missing: `tsc -b` keeps its build info in `.tsbuild/`,
 * outside `dist/`, so a `dist/` deleted by hand stays missing after `tsc -b` (`pnpm run clean` removes
 * both).
 */
export function checkBuilt(packages: readonly PublicPackage[]): void {
  const missing = packages.filter(
    (p) => !existsSync(join(p.dir, 'dist', 'index.js')) || !existsSync(join(p.dir, 'dist', 'index.d.ts')),
  )
  if (missing.length > 0) {
    throw new Error(
      `check:pack — no build of ${missing.map((p) => p.name).join(', ')}: run \`pnpm run clean && pnpm run build\``,
    )
  }
}

const execFileAsync = promisify(execFile)

// Like `run`, without blocking: the linters mostly wait, so several run at once.
async function runAsync(step: string, command: string, args: string[], cwd: string): Promise<string> {
  try {
    return (await execFileAsync(command, args, { cwd, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 })).stdout
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string }
    throw new Error(
      `check:pack — ${step} failed: ${command} ${args.join(' ')}\n${e.stdout ?? ''}${e.stderr ?? e.message}`,
    )
  }
}

// Runs `jobs` with at most `width` at a time; rejects with the first failure once all have ended.
async function pooled(jobs: readonly (() => Promise<unknown>)[], width: number): Promise<void> {
  let next = 0
  const failures: unknown[] = []
  const lane = async (): Promise<void> => {
    while (next < jobs.length) {
      const job = jobs[next++] as () => Promise<unknown>
      await job().catch((error: unknown) => failures.push(error))
    }
  }
  await Promise.all(Array.from({ length: width }, lane))
  if (failures.length > 0) throw failures[0]
}

/**
 * The rule of arethetypeswrong that does not hold for these packages: `cjs-resolves-to-esm` says a
 * `require()` of an ESM file fails in Node, which stopped being true with `require(esm)` (unflagged in
 * Node 20.19 and 22.12; `engines.node` is `>=20.19`, and `checkApp` requires every package). Every other
 * rule is checked under every resolution (node10, node16 from CJS and from ESM, bundler).
 */
export const ATTW_IGNORED_RULES = ['cjs-resolves-to-esm'] as const

/** The tarballs `installedApp` packed beside the app. */
export function packedTarballs(appDir: string): string[] {
  const dir = resolve(appDir, '..', 'tarballs')
  return readdirSync(dir)
    .filter((f) => f.endsWith('.tgz'))
    .map((f) => join(dir, f))
}

/**
 * publint (`--strict`: a warning fails too) and arethetypeswrong on every tarball, as packed. The
 * tarballs are the ones `installedApp` packed beside the app.
 */
export async function lintTarballs(appDir: string): Promise<string[]> {
  const dir = resolve(appDir, '..', 'tarballs')
  const tarballs = packedTarballs(appDir).map((t) => basename(t))
  const bin = (name: string) => join(root, 'node_modules', '.bin', name)
  const attwArgs = ['--ignore-rules', ...ATTW_IGNORED_RULES, '--no-definitely-typed', '--format', 'ascii']
  const jobs = tarballs.flatMap((t) => [
    () => runAsync(`publint of ${t}`, bin('publint'), ['run', '--strict', t], dir),
    () => runAsync(`arethetypeswrong of ${t}`, bin('attw'), [t, ...attwArgs, '--no-color', '--no-emoji'], dir),
  ])
  await pooled(jobs, 4)
  return tarballs
}

/**
 * The packages whose types need no `@types/node`, but for a reason outside Flowing: the package and
 * why. Each is left out of the compile without Node's types.
 */
export const NODE_FREE_EXCEPTIONS: Readonly<Record<string, string>> = {
  '@flowing/otel': "@opentelemetry/api's own declarations use the global `console` (the DOM lib or @types/node)",
}

// Whether a package declares @types/node (a dependency or a peer): its public types use Node's.
function declaresNodeTypes(p: PublicPackage): boolean {
  const json = JSON.parse(readFileSync(join(p.dir, 'package.json'), 'utf8')) as Record<string, unknown>
  return ['dependencies', 'peerDependencies'].some((field) => '@types/node' in ((json[field] ?? {}) as object))
}

/**
 * Compiles the packages that do not declare `@types/node` in a program without it: `types: []` and only
 * the ES lib (no DOM, so no global `AbortSignal` either), `skipLibCheck: false`, node16 resolution; then
 * checks that no file of `@types/node` took part (a `/// <reference types="node" />` or a `node:`
 * import would bring it in). Returns the packages compiled.
 */
export function checkWithoutNodeTypes(dir: string, packages: readonly PublicPackage[]): PublicPackage[] {
  const free = packages.filter((p) => !declaresNodeTypes(p) && NODE_FREE_EXCEPTIONS[p.name] === undefined)
  const source = `${free.map((p, i) => `import * as p${i} from '${p.name}'`).join('\n')}
import { createLoop, type HandlerContext } from '@flowing/core'
const loop = createLoop<{ job: number }>()
loop.on('job', (_m, ctx: HandlerContext<{ job: number }>) => {
  if (ctx.signal.aborted) return
  ctx.signal.addEventListener('abort', () => {}, { once: true })
})
export const all = [${free.map((_, i) => `p${i}`).join(', ')}]
`
  writeFileSync(join(dir, 'no-node.ts'), source)
  const compilerOptions = {
    target: 'es2022',
    lib: ['es2022'],
    module: 'node16',
    moduleResolution: 'node16',
    strict: true,
    skipLibCheck: false,
    noEmit: true,
    types: [],
  }
  writeFileSync(join(dir, 'tsconfig.no-node.json'), JSON.stringify({ compilerOptions, files: ['no-node.ts'] }))
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc')
  const args = [tsc, '-p', 'tsconfig.no-node.json', '--listFiles']
  const files = run('the TypeScript compile without @types/node', process.execPath, args, dir)
  const node = files.split('\n').filter((f) => f.includes('/@types/node/'))
  if (node.length > 0) throw new Error(`check:pack — the compile without @types/node read ${node.join(', ')}`)
  return free
}

async function main(): Promise<void> {
  const started = Date.now()
  checkBuilt(publicPackages())
  const { dir, packages } = installedApp()
  try {
    const maps = checkSourceMaps(packedTarballs(dir))
    console.log(`check:pack: ${maps} source maps resolve inside their tarballs, with their sources`)
    checkApp(dir, packages)
    const linting = Date.now()
    const linted = await lintTarballs(dir)
    const lintSeconds = ((Date.now() - linting) / 1000).toFixed(0)
    const free = checkWithoutNodeTypes(dir, packages)
    console.log(
      `check:pack: publint (strict) and arethetypeswrong clean on ${linted.length} tarballs (${lintSeconds} s)`,
    )
    console.log(`check:pack: compiled without @types/node: ${free.map((p) => p.name).join(', ')}`)
    checkTuneBin(dir)
    const seconds = ((Date.now() - started) / 1000).toFixed(0)
    console.log(`check:pack: ${packages.length} packages packed, installed with npm, imported (ESM, CommonJS) and`)
    console.log(
      `type-checked (node16, bundler; CommonJS under node20, nodenext; skipLibCheck false) in ${seconds} s: ${packages.map((p) => p.name).join(', ')}`,
    )
  } finally {
    if (!process.argv.includes('--keep')) rmSync(resolve(dir, '..'), { recursive: true, force: true })
    else console.log(`kept: ${dir}`)
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename)) await main()
