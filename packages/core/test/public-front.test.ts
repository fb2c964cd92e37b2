/**
 * The public `Loop` carries no internal protocol a user could call by mistake.
 */
import { describe, expect, it } from 'vitest'
import { virtualLoop } from './fixtures.js'

describe('Loop', () => {
  describe('the public front', () => {
    it('has no pool protocol to misuse (a user calling loop.take() silently lost a message)', () => {
      const { loop } = virtualLoop()
      for (const member of ['take', 'begin', 'end', 'invoke', 'commit', 'canDispatch', 'started', 'late', 'pumped']) {
        expect(member in loop, member).toBe(false)
      }
      // @ts-expect-error — not part of the public type either
      expect(loop.take).toBeUndefined()
    })
  })
})
