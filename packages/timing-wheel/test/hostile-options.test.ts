import { describe, expect, it } from 'vitest'
import { TimingWheel, TimingWheelError, WheelArgumentError, WheelDriver } from '../src/index.js'

const trap = (): never => {
  throw new Error('trap')
}
const revoked = (): object => {
  const { proxy, revoke } = Proxy.revocable({}, {})
  revoke()
  return proxy
}

// Options a caller's code can hand over whose reading throws: refused with a typed error, not the trap's.
const HOSTILE: [string, () => object, string][] = [
  ['a Proxy whose ownKeys trap throws', () => new Proxy({}, { ownKeys: trap }), 'options'],
  ['a revoked Proxy', revoked, 'options'],
  [
    'a throwing getter under an unknown name',
    () => Object.defineProperty({}, 'tickMS', { enumerable: true, get: trap }),
    'options.tickMS',
  ],
]

describe('hostile options', () => {
  it.each(HOSTILE)('new TimingWheel(%s) throws a WheelArgumentError naming the option', (_, make, argument) => {
    const error = (() => {
      try {
        new TimingWheel(make() as never)
      } catch (thrown) {
        return thrown
      }
      return undefined
    })()
    expect(error).toBeInstanceOf(WheelArgumentError)
    expect(error).toBeInstanceOf(TimingWheelError)
    expect(error).toMatchObject({
      code: 'ERR_TIMING_WHEEL_INVALID_ARGUMENT',
      argument,
      rule: 'a readable option (reading it threw)',
    })
    expect((error as Error).message).toMatch(new RegExp(`^Expected \`${argument}\` to be a readable option`))
  })

  it.each(HOSTILE)('new WheelDriver(%s) throws a WheelArgumentError naming the option', (_, make, argument) => {
    const options = make()
    expect(() => new WheelDriver(options as never)).toThrow(WheelArgumentError)
    expect(() => new WheelDriver(options as never)).toThrow(new RegExp(`\`${argument}\``))
  })
})
