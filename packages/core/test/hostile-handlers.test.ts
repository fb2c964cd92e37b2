import { describe, expect, it } from 'vitest'
import type { DeadLetter } from '../src/index.js'
import { ended, virtualLoop } from './fixtures.js'
import { HOSTILE_CASES } from './hostile.js'

describe('Loop', () => {
  describe('on()', () => {
    it.each([
      ['throws', 'sync'],
      ['rejects with', 'async'],
    ] as const)('gives every message an outcome when its handler %s a hostile value', async (_verb, mode) => {
      const letters: DeadLetter[] = []
      const warnings: string[] = []
      const { loop, clock } = virtualLoop({
        retry: { maxAttempts: 2, unknownMaxAttempts: 2, baseMs: 10 },
        random: () => 0.5,
        traces: 'all',
        logger: { warn: (line) => warnings.push(line) },
        deadLetters: { sink: { add: (letter) => void letters.push(letter) } },
        alerts: { threshold: 1, onAlert: () => {} },
      })
      const failures: unknown[] = []
      loop.events.on('failed', (_m, _error, info) => failures.push(info.error))
      loop.on('work', (m) => {
        const value = (HOSTILE_CASES[m.payload] as (typeof HOSTILE_CASES)[number])[1]()
        if (mode === 'sync') throw value
        return Promise.reject(value)
      })
      for (let i = 0; i < HOSTILE_CASES.length; i++) loop.post('work', i)
      await clock.run()
      const counters = loop.metrics().counters
      expect(counters.accepted).toBe(HOSTILE_CASES.length)
      expect(ended(counters)).toBe(HOSTILE_CASES.length)
      expect(counters.deadLettered).toBe(HOSTILE_CASES.length)
      expect(letters).toHaveLength(HOSTILE_CASES.length)
      for (const letter of letters) {
        expect(typeof letter.error.name).toBe('string')
        expect(typeof letter.error.message).toBe('string')
        expect(() => JSON.stringify(letter.error)).not.toThrow()
      }
      expect(failures.length).toBeGreaterThanOrEqual(HOSTILE_CASES.length)
      expect(warnings.length).toBeGreaterThan(0)
      await expect(loop.stop()).resolves.toBeDefined()
    })
  })
})
