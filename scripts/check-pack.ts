/**
 * The packed artifacts, as a user outside the monorepo gets them: packs every public package with
 * pnpm (the one packer that rewrites `workspace:` ranges), installs the tarballs with plain npm into a
 * temporary app, and runs an ESM import, a CommonJS `require()` (Node's `require(esm)`), and a
 * TypeScript compile with `skipLibCheck: false` under `node16` and `bundler` resolution against them,
 * then the installed `flowing-tune` bin on a small handler module.
 * Needs a build first (`tsc -b`). Run: `pnpm run check:pack`; `--keep` leaves the app for a look.
 *
 * @module
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

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

// Runs a command; on failure, throws with the step's name and the command's whole output.
function run(step: string, command: string, args: string[], cwd: string): string {
  try {
    return execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string }
    throw new Error(
      `check:pack — ${step} failed: ${command} ${args.join(' ')}\n${e.stdout ?? ''}${e.stderr ?? e.message}`,
    )
  }
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
}

// A user's handler module for the tuner: plain ESM, 0.2 ms of synchronous work a message (CPU-bound, so
// a short sweep always has a knee), with loop options of its own.
const TUNE_MODULE = `const spin = (ms) => { const end = performance.now() + ms; while (performance.now() < end); }
export default {
  register(loop) { loop.on('job', () => spin(0.2)) },
  sample: (i) => ({ type: 'job', payload: i, key: i % 50 }),
  loopOptions: { retry: { maxAttempts: 2 }, timeoutMs: 5000 },
}
`

/** Runs the installed `flowing-tune` bin on a tiny module with a short sweep: it must exit 0 with a report. */
export function checkTuneBin(dir: string): void {
  writeFileSync(join(dir, 'tune-handlers.mjs'), TUNE_MODULE)
  const bin = join(dir, 'node_modules', '.bin', 'flowing-tune')
  const flags = ['--workers', '1,2', '--duration', '300ms', '--warmup', '50ms', '--trials', '1', '--p99', '5s']
  const out = run('the installed flowing-tune bin', bin, ['tune-handlers.mjs', ...flags], dir)
  if (!/\*\*Recommendation: \d+ workers?\*\*/.test(out) || !/^Machine: /m.test(out)) {
    throw new Error(`check:pack — flowing-tune printed no report:\n${out}`)
  }
}

function main(): void {
  const started = Date.now()
  const { dir, packages } = installedApp()
  try {
    checkApp(dir, packages)
    checkTuneBin(dir)
    const seconds = ((Date.now() - started) / 1000).toFixed(0)
    console.log(`check:pack: ${packages.length} packages packed, installed with npm, imported (ESM, CommonJS) and`)
    console.log(
      `type-checked (node16, bundler; skipLibCheck false) in ${seconds} s: ${packages.map((p) => p.name).join(', ')}`,
    )
  } finally {
    if (!process.argv.includes('--keep')) rmSync(resolve(dir, '..'), { recursive: true, force: true })
    else console.log(`kept: ${dir}`)
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename)) main()
