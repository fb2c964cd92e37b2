import { describe, expect, it } from 'vitest'
import { BackpressureArgumentError, BackpressurePolicyError, WatermarkController } from '../src/index.js'

function thrown(act: () => unknown): unknown {
  try {
    act()
  } catch (error) {
    return error
  }
  return undefined
}

describe('WatermarkController hostile options', () => {
  const { proxy: revoked, revoke } = Proxy.revocable({}, {})
  revoke()
  const boom = (): never => {
    throw new Error('trap')
  }
  it.each([
    ['a Proxy whose ownKeys trap throws', new Proxy({}, { ownKeys: boom }), 'options'],
    ['a revoked Proxy', revoked, 'options'],
    [
      'a throwing getter',
      Object.defineProperty({}, 'minDwellMs', { enumerable: true, get: boom }),
      'options.minDwellMs',
    ],
    ['a throwing breaker getter', { admissionBreaker: new Proxy({}, { ownKeys: boom }) }, 'admissionBreaker'],
  ])('refuses %s with a typed error naming the option, not the trap', (_, options, argument) => {
    const error = thrown(() => new WatermarkController(options as never))
    expect(error).toBeInstanceOf(BackpressureArgumentError)
    expect(error).toBeInstanceOf(BackpressurePolicyError)
    expect(error).toMatchObject({ code: 'ERR_BACKPRESSURE_INVALID_ARGUMENT', argument })
    expect((error as Error).message).toMatch(new RegExp(`^Expected \`${argument}\` to be a readable option`))
  })
})
