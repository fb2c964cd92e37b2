import { InvalidArgumentError } from '@flowing/core'
import { describe, expect, it } from 'vitest'
import { checkPost } from '../src/internal/post-input.js'
import { type NatsLoopOptions, resolveOptions } from '../src/options.js'

/** Runs `act` and returns the InvalidArgumentError it throws (failing on anything else). */
function refusal(act: () => unknown): InvalidArgumentError {
  try {
    act()
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidArgumentError)
    return error as InvalidArgumentError
  }
  throw new Error('expected an InvalidArgumentError, nothing was thrown')
}

describe('resolveOptions()', () => {
  it('refuses an unknown option quoting its value, as every package does, with a did-you-mean', () => {
    const error = refusal(() => resolveOptions({ servers: 'localhost', partitons: 4 } as NatsLoopOptions))
    expect(error.code).toBe('ERR_FLOWING_INVALID_ARGUMENT')
    expect([error.argument, error.value, error.hint]).toEqual(['options.partitons', 4, 'did you mean `partitions`?'])
    expect(error.message).toMatch(
      /^Expected `options.partitons` to be one of the known options \(servers, connection, .*\), got `4` \(number\); did you mean `partitions`\?$/,
    )
  })

  it('refuses a session or a batch out of range, a fraction or a hostile value, naming the option', () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('boom')
        },
      },
    )
    const cases: [Partial<NatsLoopOptions>, string][] = [
      [{ sessionMs: 499 }, 'options.sessionMs'],
      [{ sessionMs: 1.5e3 + 0.5 }, 'options.sessionMs'],
      [{ sessionMs: '6000' as never }, 'options.sessionMs'],
      [{ maxAckPending: 0 }, 'options.maxAckPending'],
      [{ maxAckPending: 10_001 }, 'options.maxAckPending'],
      [{ maxAckPending: hostile as never }, 'options.maxAckPending'],
    ]
    for (const [given, argument] of cases) {
      const error = refusal(() => resolveOptions({ servers: 'localhost', ...given }))
      expect(error.argument).toBe(argument)
    }
    expect(resolveOptions({ servers: 'localhost' })).toMatchObject({ sessionMs: 6_000, maxAckPending: 128 })
    // On a cluster, longer than a leader election by default; a given session is kept as given.
    expect(resolveOptions({ servers: 'localhost', replicas: 3 }).sessionMs).toBe(20_000)
    expect(resolveOptions({ servers: 'localhost', replicas: 3, sessionMs: 8_000 }).sessionMs).toBe(8_000)
  })

  it('refuses an unknown key of `idempotency` quoting its value', () => {
    const error = refusal(() => resolveOptions({ servers: 'localhost', idempotency: { ttl: 5000 } } as never))
    expect(error.message).toBe(
      'Expected `options.idempotency.ttl` to be one of the known options (ttlMs), got `5000` (number); did you mean `ttlMs`?',
    )
  })
})

describe('checkPost()', () => {
  it('refuses an unknown post option quoting its value, in the words of every other package', () => {
    const error = refusal(() => checkPost('step', { prority: 3 } as never))
    expect(error.message).toBe(
      'Expected `options.prority` to be one of the known options (key, priority, idempotencyKey, retry, handlerTimeoutMs, headers, jobKey, jobKeyMode, maxWaitMs), got `3` (number); did you mean `priority`?',
    )
  })

  it('keeps the words of its other rules', () => {
    expect(refusal(() => checkPost('step', { priority: 12 } as never)).message).toBe(
      'Expected `options.priority` to be an integer from 0 to 9, got `12` (number)',
    )
    expect(refusal(() => checkPost('step', { handlerTimeoutMs: 0 })).message).toBe(
      'Expected `options.handlerTimeoutMs` to be a number > 0, got `0` (number)',
    )
    expect(() => checkPost('step', { handlerTimeoutMs: Number.POSITIVE_INFINITY })).not.toThrow()
  })
})
