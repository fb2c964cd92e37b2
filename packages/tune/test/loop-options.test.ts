import { InvalidArgumentError, type Loop, RetryableError } from '@flowing/core'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { InvalidLoopOptionsError } from '../src/errors.js'
import { checkLoopOptions, trialLoopOptions } from '../src/loop-options.js'
import type { TunerModule } from '../src/module.js'
import { tune } from '../src/run.js'
import { tiny } from './fixtures.js'

const owned = { workers: 4, capacity: 100, logger: { warn() {} } }
const base: TunerModule = { register() {}, sample: (i) => ({ type: 'job', payload: i }) }
const withOptions = (loopOptions: unknown): TunerModule => ({ ...base, loopOptions }) as TunerModule

function refusal(run: () => unknown): InvalidLoopOptionsError {
  try {
    run()
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidLoopOptionsError)
    return error as InvalidLoopOptionsError
  }
  throw new Error('expected an InvalidLoopOptionsError')
}

describe('trialLoopOptions()', () => {
  it("puts the tuner's own options over the module's", () => {
    const options = trialLoopOptions(withOptions({ timeoutMs: 500, retry: { maxAttempts: 3 } }), owned)
    expect(options).toMatchObject({ timeoutMs: 500, retry: { maxAttempts: 3 }, workers: 4, capacity: 100 })
    expect(options.overflow).toBe('reject')
    expect(options.logger).toBe(owned.logger)
  })

  it('calls a factory with the trial’s worker count', () => {
    const factory = vi.fn(({ workers }: { workers: number }) => ({ timeoutMs: workers * 100 }))
    expect(trialLoopOptions(withOptions(factory), owned).timeoutMs).toBe(400)
    expect(factory).toHaveBeenCalledWith({ workers: 4 })
  })

  it.each([
    ['workers', 8, /loopOptions\.workers cannot be set: the tuner sweeps it \(use --workers\)/],
    ['capacity', 10, /use --capacity/],
    ['overflow', 'drop-new', /'reject' so that open-loop refusals are counted/],
    ['logger', console, /counts the trial loop's log lines/],
  ])('refuses %s, which the tuner owns', (key, value, message) => {
    const error = refusal(() => trialLoopOptions(withOptions({ [key]: value }), owned))
    expect(error.option).toBe(`loopOptions.${key}`)
    expect(error.message).toMatch(message)
  })

  it('refuses a journal store given as an object (one store for every trial)', () => {
    const error = refusal(() => trialLoopOptions(withOptions({ store: { name: 'x' } }), owned))
    expect(error.message).toMatch(/must come from a factory/)
  })

  it('names a factory that throws, with what it threw as the cause', () => {
    const boom = new Error('no config')
    const error = refusal(() =>
      trialLoopOptions(
        withOptions(() => {
          throw boom
        }),
        owned,
      ),
    )
    expect(error.message).toBe('loopOptions({ workers: 4 }) threw: no config')
    expect(error.cause).toBe(boom)
  })

  it('refuses a factory that returns no object', () => {
    expect(
      refusal(() =>
        trialLoopOptions(
          withOptions(() => 42),
          owned,
        ),
      ).message,
    ).toMatch(/loopOptions\(\) returned number; expected an object of createLoop\(\) options/)
  })
})

describe('checkLoopOptions()', () => {
  it("reports what createLoop() refuses under the module's name for it", async () => {
    const error = await checkLoopOptions(withOptions({ retry: { maxAttempts: 0 } }), 1, 100).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(InvalidLoopOptionsError)
    expect((error as InvalidLoopOptionsError).option).toBe('loopOptions.retry.maxAttempts')
    expect((error as Error).message).toMatch(/^Expected `loopOptions\.retry\.maxAttempts` to be/)
    expect((error as Error).cause).toBeInstanceOf(InvalidArgumentError)
  })

  it('accepts good options and a module without any', async () => {
    await expect(checkLoopOptions(withOptions({ timeoutMs: 100 }), 1, 100)).resolves.toBeUndefined()
    await expect(checkLoopOptions(base, 1, 100)).resolves.toBeUndefined()
  })
})

// Every message fails its first attempt: only the module's retry makes them succeed.
function flaky(loopOptions?: TunerModule['loopOptions']): TunerModule {
  const seen = new Set<number>()
  return {
    register(loop: Loop<Record<string, unknown>>) {
      loop.on('job', (msg) => {
        const n = msg.payload as number
        if (!seen.has(n)) {
          seen.add(n)
          throw new RetryableError(`first attempt of ${n}`)
        }
      })
    },
    sample: (i) => ({ type: 'job', payload: i }),
    ...(loopOptions === undefined ? {} : { loopOptions }),
  }
}

describe('the trial loops', () => {
  afterEach(() => vi.restoreAllMocks())

  it("run with the module's loop options", async () => {
    const retrying = await tune(
      tiny('retrying', { workers: [2] }),
      () => {},
      flaky({ retry: { maxAttempts: 2, baseMs: 1, jitter: 0 } }),
    )
    expect(retrying.points.every((p) => p.failureRate === 0 && p.throughput > 0)).toBe(true)
    await expect(tune(tiny('plain', { workers: [2] }), () => {}, flaky())).rejects.toThrow(/every message failed/)
  })

  it('fail before the sweep on a bad option', async () => {
    const started = vi.fn()
    await expect(
      tune(tiny('bad'), started, { ...flaky(), loopOptions: { retry: { maxAttempts: -1 } } }),
    ).rejects.toBeInstanceOf(InvalidLoopOptionsError)
    expect(started).not.toHaveBeenCalled()
  })

  it('are quiet: a new failure is counted in the report, never printed', async () => {
    const warn = vi.spyOn(console, 'warn')
    const log = vi.spyOn(console, 'log')
    const errorLog = vi.spyOn(console, 'error')
    const stderr = vi.spyOn(process.stderr, 'write')
    let n = 0
    const sometimes: TunerModule = {
      register(loop: Loop<Record<string, unknown>>) {
        loop.on('job', () => {
          if (n++ % 10 === 0) throw new Error('downstream said no')
        })
      },
      sample: (i) => ({ type: 'job', payload: i }),
    }
    const printed: string[] = []
    const run = await tune(tiny('sometimes'), (text) => printed.push(text), sometimes)
    for (const spy of [warn, log, errorLog, stderr]) expect(spy).not.toHaveBeenCalled()
    expect(run.points.reduce((sum, p) => sum + p.logged, 0)).toBeGreaterThan(0)
    expect(run.report.text).toMatch(/The trial loops logged \d+ lines?.*new failure of job/)
    expect(printed.join('\n')).not.toMatch(/^\[flowing\]/m)
  })
})
