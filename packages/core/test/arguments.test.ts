/** I7 for the arguments that used to escape untyped or be silently ignored (issue 12, defects 5 and 15). */
import { describe, expect, it } from 'vitest'
import {
  createLoop,
  InvalidArgumentError,
  installShutdownHandlers,
  type SignalSource,
  SnapshotError,
} from '../src/index.js'
import { checkKnownKeys } from '../src/internal/validate.js'
import { thrown, virtualLoop } from './fixtures.js'

const noProcess: SignalSource = { on: () => {}, removeListener: () => {}, exit: () => {} }
const stoppable = { stop: () => Promise.reject(new Error('not called')) }

/** Asserts `error` is an InvalidArgumentError naming `argument`; returns it. */
function invalid(error: unknown, argument: string): InvalidArgumentError {
  expect(error).toBeInstanceOf(InvalidArgumentError)
  expect((error as InvalidArgumentError).argument).toBe(argument)
  return error as InvalidArgumentError
}

describe('Loop', () => {
  describe('post()', () => {
    it('refuses an undefined type with an InvalidArgumentError naming `type`, counted as rejected', () => {
      const { loop } = virtualLoop()
      loop.on('work', () => {})
      for (const type of [undefined, null, 7]) {
        const error = invalid(
          thrown(() => loop.post(type as never, 1 as never)),
          'type',
        )
        expect(error.message).toContain('to be a non-empty string')
      }
      invalid(
        thrown(() => loop.tryPost(undefined as never, 1 as never)),
        'type',
      ) // bad input throws from tryPost too: only overload is a result
      expect(loop.metrics().counters).toMatchObject({ accepted: 0, rejected: 4 })
    })
  })

  describe('on()', () => {
    it('refuses options that are not an object', () => {
      const { loop } = virtualLoop()
      const error = invalid(
        thrown(() => loop.on('work', () => {}, 5 as never)),
        'options',
      )
      expect(error.message).toBe('Expected `options` to be an object, got `5` (number)')
      expect(loop.metrics().counters.accepted).toBe(0)
      expect(() => loop.post('work', 1)).toThrow('No handler registered') // nothing was registered
    })

    it('refuses an unknown option, listing the known ones and suggesting a close typo', () => {
      const { loop } = virtualLoop()
      const error = invalid(
        thrown(() => loop.on('work', () => {}, { timeotMs: 5 } as never)),
        'options.timeotMs',
      )
      expect(error.message).toBe(
        'Expected `options.timeotMs` to be one of the known options (replace, timeoutMs, heartbeatMs, compensate, checkPayload, retry, circuitBreaker, rateLimit, maxCrashes), got `5` (number); did you mean `timeoutMs`?',
      )
      expect(thrown(() => loop.on('work', () => {}, { sparkle: true } as never)).message).not.toContain('did you mean')
      expect(() => loop.post('work', 1)).toThrow('No handler registered')
    })

    it('refuses a non-boolean replace', () => {
      const { loop } = virtualLoop()
      invalid(
        thrown(() => loop.on('work', () => {}, { replace: 'yes' } as never)),
        'options.replace',
      )
    })
  })

  describe('route()', () => {
    it('refuses unknown options like on()', () => {
      const { loop } = virtualLoop()
      invalid(
        thrown(() => loop.route('order.updated', (m) => m.payload.status, { retyr: {} } as never)),
        'options.retyr',
      )
    })
  })
})

describe('Router', () => {
  describe('on()', () => {
    it('refuses options a route cannot have, and non-object options', () => {
      const { loop } = virtualLoop()
      const router = loop.route('order.updated', (m) => m.payload.status)
      const error = invalid(
        thrown(() => router.on('paid', () => {}, { timeoutMs: 5 } as never)),
        'options.timeoutMs',
      )
      expect(error.message).toContain('one of the known options (replace)')
      invalid(
        thrown(() => router.on('paid', () => {}, 5 as never)),
        'options',
      )
      invalid(
        thrown(() => router.otherwise(() => {}, { replac: true } as never)),
        'options.replac',
      )
      expect(thrown(() => router.otherwise(() => {}, { replac: true } as never)).message).toContain(
        'did you mean `replace`?',
      )
    })
  })
})

describe('createLoop()', () => {
  it('turns an options Proxy whose traps throw into an InvalidArgumentError with the cause', () => {
    const trap = () => {
      throw 1
    }
    const error = invalid(
      thrown(() => createLoop(new Proxy({}, { get: trap, ownKeys: trap }) as never)),
      'options',
    )
    expect(error.message).toBe('Expected `options` to be a readable option (reading it threw), got `1` (number)')
    expect(error.cause).toBe(1)
    const getOnly = invalid(
      thrown(() => createLoop(new Proxy({ capacity: 5 }, { get: trap }) as never)),
      'options.capacity',
    )
    expect(getOnly.cause).toBe(1)
  })

  it('turns a throwing getter into an InvalidArgumentError naming the option', () => {
    const boom = new Error('x')
    const error = invalid(
      thrown(() =>
        createLoop({
          get capacity(): number {
            throw boom
          },
        }),
      ),
      'options.capacity',
    )
    expect(error.message).toContain('to be a readable option')
    expect(error.cause).toBe(boom)
  })
})

describe('installShutdownHandlers()', () => {
  it('refuses a signal name Node does not know, suggesting a close one', () => {
    const error = invalid(
      thrown(() =>
        installShutdownHandlers(stoppable, { signals: ['SIGTERM', 'SIGBOGUS' as never], process: noProcess }),
      ),
      'options.signals[1]',
    )
    expect(error.message).toContain('a signal name of os.constants.signals')
    expect(thrown(() => installShutdownHandlers(stoppable, { signals: ['SIGTREM' as never] })).message).toContain(
      'did you mean `SIGTERM`?',
    )
  })

  it('turns a throwing getter in its options into an InvalidArgumentError', () => {
    invalid(
      thrown(() =>
        installShutdownHandlers(stoppable, {
          get signals(): never {
            throw new Error('x')
          },
        }),
      ),
      'options.signals',
    )
  })

  it('still installs on known signals', () => {
    const on: string[] = []
    const uninstall = installShutdownHandlers(stoppable, {
      signals: ['SIGHUP', 'SIGUSR2'],
      process: { ...noProcess, on: (s) => on.push(s) },
    })
    expect(on).toEqual(['SIGHUP', 'SIGUSR2'])
    uninstall()
  })
})

describe('checkKnownKeys()', () => {
  it('accepts known keys and names the first unknown one with a suggestion within two edits', () => {
    expect(() => checkKnownKeys('options', { deadlineMs: 1 }, ['deadlineMs', 'drain'])).not.toThrow()
    const error = invalid(
      thrown(() => checkKnownKeys('options', { deadline: 20_000 }, ['deadlineMs', 'drain'])),
      'options.deadline',
    )
    expect(error.message).toBe(
      'Expected `options.deadline` to be one of the known options (deadlineMs, drain), got `20000` (number); did you mean `deadlineMs`?',
    )
    expect(thrown(() => checkKnownKeys('o', { maxAtempts: 1 }, ['maxAttempts'])).message).toContain(
      'did you mean `maxAttempts`?',
    )
    expect(thrown(() => checkKnownKeys('o', { xyz: 1 }, ['maxAttempts'])).message).not.toContain('did you mean')
  })
})

describe('Loop', () => {
  describe('restore()', () => {
    it('refuses a snapshot field holding a hostile value with a SnapshotError, not a TypeError', () => {
      const { loop } = virtualLoop()
      const takenAt = Object.assign(Object.create(null), { at: 1n }) // JSON.stringify and String() both throw
      const snapshot = { format: 'flowing.snapshot', version: 1, takenAt }
      const error = thrown(() => loop.restore(snapshot as never))
      expect(error).toBeInstanceOf(SnapshotError)
      expect(error.message).toContain('`takenAt` must be a time in ms, got `[object]` (object)')
    })
  })
})
