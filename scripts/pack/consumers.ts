/**
 * Two consumers of the installed tarballs that the README promises work:
 *
 * - a **CommonJS TypeScript** project (`"type": "commonjs"`) compiled by tsc under `module: node20`
 *   and `nodenext` — the modes that model Node's `require(esm)` — and run; and the same source under
 *   `module: node16`, which must still fail with TS1479 (the packages are ESM only), so the README's
 *   advice stays true;
 * - a **stack trace** under `node --enable-source-maps`: an error thrown inside `@flowing/core` must
 *   point at the shipped TypeScript (`node_modules/@flowing/core/src/….ts`), through the shipped maps.
 *
 * @module
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { run } from './run.js'

// What the CommonJS TypeScript app does: a typed loop, run to its end; tsc turns the import into require().
const CJS_TS_APP = `import { createLoop, type Message } from '@flowing/core'
interface Messages { job: { n: number } }
const loop = createLoop<Messages>({ logger: false })
let sum = 0
loop.on('job', (m: Message<Messages, 'job'>) => { sum += m.payload.n })
loop.start()
for (let n = 1; n <= 3; n++) loop.post('job', { n })
void loop.stop({ drain: true }).then(() => {
  if (sum !== 6) throw new Error('sum ' + sum)
  console.log('cjs ts ok')
})
`

// The CommonJS TypeScript project's tsconfig under one module mode.
function cjsTsconfig(module: string): string {
  const compilerOptions = { target: 'es2022', module, strict: true, skipLibCheck: false, types: ['node'] }
  return JSON.stringify({ compilerOptions: { ...compilerOptions, outDir: `out-${module}` }, files: ['index.ts'] })
}

/**
 * Compiles and runs the CommonJS TypeScript app under `node20` and `nodenext`; checks that `node16`
 * refuses it with TS1479. `dir` is the installed app, `tsc` TypeScript's bin.
 */
export function checkCommonJsTypeScript(dir: string, tsc: string): void {
  const cjs = join(dir, 'cjs-ts')
  mkdirSync(cjs, { recursive: true })
  writeFileSync(join(cjs, 'package.json'), JSON.stringify({ private: true, type: 'commonjs' }))
  writeFileSync(join(cjs, 'index.ts'), CJS_TS_APP)
  for (const module of ['node20', 'nodenext']) {
    writeFileSync(join(cjs, `tsconfig.${module}.json`), cjsTsconfig(module))
    run(
      `the CommonJS TypeScript compile (module ${module})`,
      process.execPath,
      [tsc, '-p', `tsconfig.${module}.json`],
      cjs,
    )
    const out = run(`the CommonJS TypeScript app (module ${module})`, process.execPath, [`out-${module}/index.js`], cjs)
    if (!out.includes('cjs ts ok')) throw new Error(`check:pack — the CommonJS TypeScript app printed ${out}`)
  }
  writeFileSync(join(cjs, 'tsconfig.node16.json'), cjsTsconfig('node16'))
  let refused = ''
  try {
    run('the CommonJS TypeScript compile (module node16)', process.execPath, [tsc, '-p', 'tsconfig.node16.json'], cjs)
  } catch (error) {
    refused = (error as Error).message
  }
  if (!refused.includes('TS1479')) {
    throw new Error(`check:pack — module node16 no longer refuses a CommonJS import (update the READMEs): ${refused}`)
  }
}

// Throws from inside core (a bad option) and prints the stack.
const THROWING_APP = `import { createLoop } from '@flowing/core'
try { createLoop({ capacity: 0 }) } catch (error) { console.log(error.stack) }
`

/** Checks that a stack trace through `@flowing/core` maps to its shipped TypeScript sources. */
export function checkMappedStack(dir: string): void {
  writeFileSync(join(dir, 'throws.mjs'), THROWING_APP)
  const stack = run('the source-mapped stack trace', process.execPath, ['--enable-source-maps', 'throws.mjs'], dir)
  if (!/node_modules\/@flowing\/core\/src\/[\w/-]+\.ts:\d+:\d+/.test(stack)) {
    throw new Error(`check:pack — a stack trace through @flowing/core does not reach its TypeScript:\n${stack}`)
  }
}

/** Every consumer check on an installed app. */
export function checkConsumers(dir: string, tsc: string): void {
  checkCommonJsTypeScript(dir, tsc)
  checkMappedStack(dir)
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
