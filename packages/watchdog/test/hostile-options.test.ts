import { describe, expect, it } from 'vitest'
import { StallDetector, Watchdog, WatchdogArgumentError, WatchdogError } from '../src/index.js'

const boom = (): never => {
  throw new Error('trap')
}
const { proxy: revokedProxy, revoke } = Proxy.revocable({}, {})
revoke()

describe('hostile options', () => {
  const make = {
    Watchdog: (options: object) => new Watchdog(options as never),
    StallDetector: (options: object) => new StallDetector(options as never),
  }
  for (const [name, construct] of Object.entries(make)) {
    it.each([
      ['a Proxy whose ownKeys trap throws', new Proxy({}, { ownKeys: boom }), 'options'],
      ['a revoked Proxy', revokedProxy, 'options'],
      ['a throwing getter', Object.defineProperty({}, 'grace', { enumerable: true, get: boom }), 'options.grace'],
    ])(`new ${name}(%s) throws a WatchdogArgumentError naming the option`, (_, options, argument) => {
      let error: unknown
      try {
        construct(options)
      } catch (e) {
        error = e
      }
      expect(error).toBeInstanceOf(WatchdogArgumentError)
      expect(error).toBeInstanceOf(WatchdogError)
      expect(error).toMatchObject({ code: 'ERR_WATCHDOG_INVALID_ARGUMENT', argument })
      expect((error as Error).message).toMatch(/to be a readable option \(reading it threw\)/)
    })
  }
})
