/**
 * `stop()` checks its options before it changes anything: an unknown name or a value that is not an
 * object is an `InvalidArgumentError` naming it.
 */
import { describe, expect, it } from 'vitest'
import { InvalidArgumentError } from '../src/index.js'
import { thrown, virtualLoop } from './fixtures.js'

describe('Loop', () => {
  describe('stop() options', () => {
    it('refuses an unknown option name with a typed error naming it, and changes nothing', () => {
      const { loop } = virtualLoop()
      const error = thrown(() => loop.stop({ deadline: 20_000 } as never))
      expect(error).toBeInstanceOf(InvalidArgumentError)
      expect(error.message).toContain('options.deadline')
      expect(loop.state).toBe('running')
    })

    it('refuses options that are not an object', () => {
      const { loop } = virtualLoop()
      for (const bad of [5, 'drain', null, [true]]) {
        const error = thrown(() => loop.stop(bad as never))
        expect(error).toBeInstanceOf(InvalidArgumentError)
        expect((error as InvalidArgumentError).argument).toBe('options')
      }
      expect(loop.state).toBe('running')
    })
  })
})
