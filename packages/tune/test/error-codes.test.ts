import { FlowingError, isFlowingError } from '@flowing/errors'
import { describe, expect, it } from 'vitest'
import { parseArgs } from '../src/args.js'
import { ExitCode, InvalidLoopOptionsError, ModuleLoadError, TuneError } from '../src/errors.js'
import { trialLoopOptions } from '../src/loop-options.js'
import { checkedSample, loadModule, type TunerModule, validateShape } from '../src/module.js'

async function failure(act: () => unknown): Promise<TuneError> {
  try {
    await act()
  } catch (error) {
    expect(error).toBeInstanceOf(TuneError)
    expect(error).toBeInstanceOf(FlowingError)
    expect(isFlowingError(error)).toBe(true)
    return error as TuneError
  }
  throw new Error('expected a TuneError, nothing was thrown')
}

const module = (over: Partial<TunerModule>): TunerModule => ({
  register() {},
  sample: () => ({ type: 't', payload: 0 }),
  ...over,
})

describe('TuneError', () => {
  it('is a FlowingError with a stable code per kind of failure, its name and message kept', async () => {
    const cases: [() => unknown, string, string, RegExp][] = [
      [
        () => parseArgs(['m.js', '--nope']),
        'ERR_FLOWING_TUNE_USAGE',
        'TuneError',
        /^Unknown option `--nope` \(see --help\)$/,
      ],
      [
        () => parseArgs(['m.js', '--workers', '0']),
        'ERR_FLOWING_TUNE_USAGE',
        'TuneError',
        /^Expected `--workers` to be/,
      ],
      [
        () => loadModule('no-such-module.js'),
        'ERR_FLOWING_TUNE_MODULE',
        'TuneError',
        /^Module not found: no-such-module\.js/,
      ],
      [() => validateShape('m.js', {}), 'ERR_FLOWING_TUNE_MODULE', 'TuneError', /^m\.js has no default export object/],
      [
        () => checkedSample(module({ sample: () => 5 as never }), 3),
        'ERR_FLOWING_TUNE_SAMPLE',
        'TuneError',
        /^sample\(3\) must return/,
      ],
      [
        () =>
          trialLoopOptions(module({ loopOptions: { workers: 2 } }), {
            workers: 1,
            capacity: 10,
            logger: { warn() {} },
          }),
        'ERR_FLOWING_TUNE_LOOP_OPTIONS',
        'InvalidLoopOptionsError',
        /^loopOptions\.workers cannot be set/,
      ],
    ]
    for (const [act, code, name, message] of cases) {
      const error = await failure(act)
      expect([error.code, error.name]).toEqual([code, name])
      expect(error.message).toMatch(message)
      expect(error.exitCode).toBe(code === 'ERR_FLOWING_TUNE_USAGE' ? ExitCode.usage : ExitCode.failed)
    }
  })

  it('gives each subclass its code', () => {
    expect(new ModuleLoadError('m.js', 'Could not load m.js').code).toBe('ERR_FLOWING_TUNE_MODULE_LOAD')
    expect(new InvalidLoopOptionsError('loopOptions.x', 'bad').code).toBe('ERR_FLOWING_TUNE_LOOP_OPTIONS')
    expect(new TuneError('ERR_FLOWING_TUNE_NO_RECOMMENDATION', 'no count meets the target').exitCode).toBe(1)
  })
})
