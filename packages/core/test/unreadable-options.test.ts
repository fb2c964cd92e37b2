/**
 * Post, send and `on()` options that throw when read (a getter, a `Proxy`) are refused with an
 * `InvalidArgumentError` naming them, and nothing is admitted.
 */
import { describe, expect, it } from 'vitest'
import { InvalidArgumentError } from '../src/index.js'
import { thrown, virtualLoop } from './fixtures.js'

describe('Loop', () => {
  describe('post, send and on() options that throw when read', () => {
    const throwing = () => ({
      get priority(): number {
        throw new Error('getter exploded')
      },
    })
    const trapped = () =>
      new Proxy(
        {},
        {
          ownKeys() {
            throw new TypeError('trap')
          },
          get() {
            throw new TypeError('trap')
          },
        },
      )

    it('refuses them with an InvalidArgumentError naming the options, nothing admitted', async () => {
      const { loop } = virtualLoop({ autoStart: false })
      loop.on('work', () => {})
      for (const options of [throwing(), trapped()]) {
        const error = thrown(() => loop.post('work', 1, options as never))
        expect(error).toBeInstanceOf(InvalidArgumentError)
        expect((error as InvalidArgumentError).argument).toMatch(/^options(\.priority)?$/) // the key whose read threw
        await expect(loop.send('work', 1, options as never)).rejects.toBeInstanceOf(InvalidArgumentError)
      }
      expect(loop.metrics().counters).toMatchObject({ posted: 4, accepted: 0, rejected: 4 })
      expect(loop.queued).toBe(0)
      const retry = {
        get retry(): object {
          throw new Error('nope')
        },
      }
      expect(thrown(() => loop.on('order.paid', () => {}, retry as never))).toBeInstanceOf(InvalidArgumentError)
    })
  })
})
