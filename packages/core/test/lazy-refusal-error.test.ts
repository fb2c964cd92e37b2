/**
 * A refused `tryPost()` builds its error only when `error` is first read, with the numbers captured at
 * the refusal; `rejected` listeners still receive it.
 */
import { describe, expect, it } from 'vitest'
import { QueueFullError } from '../src/index.js'
import { virtualLoop } from './fixtures.js'

describe('Loop', () => {
  describe('a refused tryPost', () => {
    it('builds no error on the result path; reading `error` gives the typed error with the numbers of the refusal', async () => {
      const { clock, loop } = virtualLoop({ capacity: 2, overflow: 'reject', autoStart: false })
      loop.on('work', () => {})
      loop.post('work', 1)
      loop.post('work', 2)
      const refused = loop.tryPost('work', 3)
      expect(refused).toMatchObject({ ok: false, status: 'full' })
      expect(Object.getOwnPropertyDescriptor(refused, 'error')).toBeUndefined() // not built yet
      loop.start()
      const drained = loop.drain()
      await clock.run()
      await drained
      const error = (refused as { error: Error }).error
      expect(error).toBeInstanceOf(QueueFullError)
      expect((error as QueueFullError).load).toMatchObject({ queued: 2, capacity: 2 }) // at the refusal, not now
      expect((refused as { error: Error }).error).toBe(error) // built once
      expect(JSON.parse(JSON.stringify(refused))).toMatchObject({
        ok: false,
        status: 'full',
        error: { name: 'QueueFullError' },
      })
    })

    it('still hands `rejected` listeners the error', () => {
      const { loop } = virtualLoop({ capacity: 1, overflow: 'reject', autoStart: false })
      loop.on('work', () => {})
      const heard: Error[] = []
      loop.events.on('rejected', (_type, error) => heard.push(error))
      loop.post('work', 1)
      const refused = loop.tryPost('work', 2)
      expect(heard).toHaveLength(1)
      expect(heard[0]).toBe((refused as { error: Error }).error)
      expect(loop.metrics().counters.rejected).toBe(1)
    })
  })
})
