/**
 * `ctx.post()` and `ctx.tryPost()` after the attempt ended throw `FencedError` and are counted
 * (`fenced`), with or without a deadline, during a draining stop too.
 */
import { describe, expect, it } from 'vitest'
import { FencedError, type HandlerContext } from '../src/index.js'
import { type Messages, thrown, virtualLoop } from './fixtures.js'

describe('Loop', () => {
  describe('ctx.post after the attempt ended', () => {
    for (const timeoutMs of [undefined, 1_000]) {
      it(`is fenced and counted, with${timeoutMs === undefined ? 'out' : ''} timeoutMs, even during a draining stop`, async () => {
        const { clock, loop } = virtualLoop(timeoutMs === undefined ? {} : { timeoutMs })
        let kept: HandlerContext<Messages> | undefined
        loop.on('work', (_m, ctx) => {
          kept = ctx
        })
        loop.post('work', 1)
        const stopping = loop.stop()
        await clock.run()
        expect(loop.metrics().counters.succeeded).toBe(1)
        expect(thrown(() => kept?.post('work', 2))).toBeInstanceOf(FencedError)
        expect(thrown(() => kept?.tryPost('work', 3))).toBeInstanceOf(FencedError)
        await stopping
        const c = loop.metrics().counters
        expect(c).toMatchObject({ accepted: 1, fenced: 2 })
      })
    }
  })
})
