/**
 * A `random` option that returns NaN, throws or leaves [0, 1): the jitter falls back to `Math.random`,
 * reported once through the logger, and every message still ends.
 */
import { describe, expect, it } from 'vitest'
import { virtualLoop } from './fixtures.js'

describe('Loop', () => {
  describe('a `random` option that misbehaves', () => {
    for (const [name, random] of [
      ['returns NaN', () => Number.NaN],
      [
        'throws',
        () => {
          throw new Error('entropy ran out')
        },
      ],
      ['returns 7', () => 7],
    ] as const) {
      it(`still retries and ends every message when it ${name}, and stop() resolves`, async () => {
        const warnings: string[] = []
        const { clock, loop } = virtualLoop({
          random,
          logger: { warn: (line) => warnings.push(line) },
          retry: { maxAttempts: 3, unknownMaxAttempts: 3, baseMs: 5 },
        })
        let calls = 0
        loop.on('work', () => {
          calls++
          if (calls < 3) throw new Error('transient')
        })
        loop.post('work', 1)
        const stopped = loop.stop()
        await clock.run()
        await stopped
        const c = loop.metrics().counters
        expect(c).toMatchObject({ accepted: 1, succeeded: 1, retried: 2 })
        expect(warnings.filter((w) => w.includes('`random`'))).toHaveLength(1)
      })
    }
  })
})
