/**
 * `flowing-tune --smoke` (run by CI): checks the knee finder on hand-made curves, the flag parser and
 * the one-line failures on bad input, then sweeps a bundled example on tiny durations and checks that a
 * recommendation comes out. A few seconds; figures are meaningless, only the checks count.
 *
 * @module
 */
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs, type TuneOptions } from './args.js'
import { ExitCode, TuneError } from './errors.js'
import { classify, findKnee, type SweepPoint } from './knee.js'
import { loadModule, type TunerModule } from './module.js'
import { tune } from './run.js'

const curve = (pairs: readonly [number, number, number?, number?][]): SweepPoint[] =>
  pairs.map(([workers, throughput, p99 = 10, utilization = 0.3]) => ({ workers, throughput, p99, utilization }))

function checkKnee(): void {
  const io = curve([
    [1, 100],
    [2, 200],
    [4, 390],
    [8, 700],
    [16, 980],
    [32, 1000],
  ])
  assert.equal(findKnee(io, 0.05, 50).workers, 16, 'plateau: the first count within 5 % of the peak')
  assert.equal(classify(io, 0.05), 'plateau')
  const slowAtKnee = curve([
    [1, 100],
    [8, 700],
    [16, 980, 80],
    [32, 1000, 40],
  ])
  assert.equal(findKnee(slowAtKnee, 0.05, 50).workers, 32, 'a count over the p99 target is skipped')
  const cpu = curve([
    [1, 5000, 1, 0.98],
    [4, 5050, 2, 0.99],
    [16, 4990, 8, 0.99],
  ])
  assert.equal(findKnee(cpu, 0.05, 50).workers, 1)
  assert.equal(classify(cpu, 0.05), 'flat-cpu')
  const noisyCpu = curve([
    [1, 4600, 1, 1],
    [4, 4900, 2, 1],
    [32, 2900, 166, 1],
  ])
  assert.equal(classify(noisyCpu, 0.05), 'flat-cpu', 'a busy thread is CPU-bound even when the tail drops')
  const lock = curve([
    [1, 400],
    [4, 1500],
    [8, 1300],
    [32, 700],
  ])
  assert.equal(findKnee(lock, 0.05, 50).workers, 4)
  assert.equal(classify(lock, 0.05), 'drop')
  assert.equal(
    classify(
      curve([
        [1, 100],
        [2, 200],
        [4, 400],
      ]),
      0.05,
    ),
    'scales',
  )
  const impossible = findKnee(io, 0.05, 1)
  assert.equal(impossible.workers, undefined)
  assert.match(impossible.reason ?? '', /no worker count met p99/)
}

function checkArgs(): void {
  const bad = (argv: string[], pattern: RegExp): void =>
    assert.throws(
      () => parseArgs(argv),
      (e: unknown) => e instanceof TuneError && e.exitCode === ExitCode.usage && pattern.test(e.message),
    )
  bad(['m.js', '--workers', '0,2'], /`--workers`.*got `0,2`/)
  bad(['m.js', '--duration', 'soon'], /`--duration`/)
  bad(['m.js', '--p99', '-5ms'], /`--p99`/)
  bad(['m.js', '--frobnicate'], /Unknown option/)
  bad([], /Missing the handler module/)
  const ok = parseArgs(['m.ts', '--workers', '8,1,2', '--duration', '2s', '--rate', '500/s', '--p99', '20ms'])
  assert.equal(ok.kind, 'tune')
  if (ok.kind === 'tune') {
    assert.deepEqual(ok.options.workers, [1, 2, 8])
    assert.equal(ok.options.durationMs, 2000)
    assert.equal(ok.options.rate, 500)
    assert.equal(ok.options.p99Ms, 20)
  }
}

/** The options of a tiny quiet sweep of `module` (smoke-sized), with `extra` over them. */
export const tiny = (module: string, extra: Partial<TuneOptions> = {}): TuneOptions => ({
  module,
  workers: [1, 4, 16],
  threads: undefined,
  durationMs: 250,
  warmupMs: 50,
  rate: undefined,
  p99Ms: 1000,
  trials: 1,
  tolerance: 0.05,
  out: undefined,
  capacity: 10_000,
  quiet: true,
  ...extra,
})

async function rejects(run: () => Promise<unknown>, pattern: RegExp): Promise<void> {
  await assert.rejects(run, (e: unknown) => e instanceof TuneError && pattern.test(e.message))
}

async function checkBadModules(): Promise<void> {
  const silent = (): void => {}
  await rejects(() => loadModule('./no/such/handlers.js'), /Module not found/)
  const shapeless = { register: () => {} } as unknown as TunerModule
  await rejects(() => tune(tiny('inline'), silent, { ...shapeless, sample: 42 } as unknown as TunerModule), /sample/)
  const throwing: TunerModule = {
    register: (loop) => {
      loop.on('boom', () => {
        throw new Error('database is down')
      })
    },
    sample: () => ({ type: 'boom', payload: null }),
  }
  await rejects(() => tune(tiny('throwing'), silent, throwing), /every message failed.*database is down/)
  const unregistered: TunerModule = { register: () => {}, sample: () => ({ type: 'nope', payload: null }) }
  await rejects(() => tune(tiny('unregistered'), silent, unregistered), /sample\(0\) was refused.*nope/)
}

// The bundled sweep target: a downstream of 16 slots, 5 ms a call — an I/O-bound plateau from 16 workers.
function slotted(slots: number, callMs: number): TunerModule {
  let free = slots
  const waiting: (() => void)[] = []
  return {
    register(loop) {
      loop.on('call', async () => {
        if (free > 0) free--
        else await new Promise<void>((resolve) => waiting.push(resolve))
        try {
          await sleep(callMs)
        } finally {
          const next = waiting.shift()
          if (next) next()
          else free++
        }
      })
    },
    sample: (i) => ({ type: 'call', payload: i, key: i % 100 }),
  }
}

/**
 * Runs every check and one tiny sweep — of `module` when given (a path, loaded like a user's module),
 * else of a bundled I/O-bound module; throws (an AssertionError or TuneError) on the first failure.
 */
export async function runSmoke(print: (text: string) => void, module?: string): Promise<void> {
  checkKnee()
  checkArgs()
  await checkBadModules()
  print('flowing-tune smoke: knee finder, flags and bad-input checks passed')
  const target = module ?? 'the bundled io-bound module'
  const inline = module === undefined ? slotted(16, 5) : undefined
  const sweepOf = (extra: Partial<TuneOptions> = {}): TuneOptions => tiny(target, { workers: [1, 16, 32], ...extra })
  const run = await tune(sweepOf(), print, inline)
  assert.ok(run.report.knee.workers !== undefined, `${target} gets a recommendation`)
  assert.equal(run.points.length, 3)
  assert.ok(run.points.every((p) => p.throughput > 0 && p.p99 > 0))
  await rejects(() => tune(sweepOf({ p99Ms: 0.001 }), () => {}, inline), /no worker count met p99/)
  print(`flowing-tune smoke: ok (recommended ${run.report.knee.workers} workers for ${target})`)
}
