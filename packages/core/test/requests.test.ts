/**
 * `loop.request()`: its own options (`undefined` is absent; a bad one is a counted refusal that admits
 * nothing) and who gets a failure (its caller, not the dead-letter store, unless it asks).
 */
import { describe, expect, it } from 'vitest'
import {
  type AttemptFailure,
  type FinishedSummary,
  InvalidArgumentError,
  MemoryStore,
  NonRetryableError,
  RequestFailedError,
  VirtualClock,
} from '../src/index.js'
import { ended, virtualLoop } from './fixtures.js'

// What a failure tells the outside: events, alerts, the logger's warnings.
function watchFailures(loop: ReturnType<typeof virtualLoop>['loop']) {
  const seen = {
    deadLettered: 0,
    alerts: 0,
    signatures: 0,
    failed: [] as AttemptFailure['next'][],
    finished: [] as FinishedSummary[],
  }
  loop.events.on('dead-lettered', () => seen.deadLettered++)
  loop.events.on('alert', () => seen.alerts++)
  loop.events.on('signature', () => seen.signatures++)
  loop.events.on('failed', (_m, _e, f) => seen.failed.push(f.next))
  loop.events.on('finished', (_m, s) => seen.finished.push(s))
  return seen
}

describe('Loop', () => {
  describe('request() options', () => {
    it('takes `waitTimeoutMs: undefined` (and `deadLetter: undefined`) as absent: no time limit', async () => {
      const { loop, clock } = virtualLoop()
      loop.on('work', async (m) => {
        await clock.sleep(60_000)
        return m.payload + 1
      })
      const answer = loop.request<'work', number>('work', 1, { waitTimeoutMs: undefined, deadLetter: undefined })
      await clock.advance(59_999)
      expect(loop.metrics().counters).toMatchObject({ posted: 1, accepted: 1, rejected: 0, cancelled: 0 })
      await clock.run()
      await expect(answer).resolves.toBe(2)
    })

    it('takes every optional post option as `undefined`, in every way to post', async () => {
      const { loop, clock } = virtualLoop()
      loop.on('work', (m) => m.payload)
      const none = {
        key: undefined,
        priority: undefined,
        overflow: undefined,
        handlerTimeoutMs: undefined,
        retry: undefined,
        idempotencyKey: undefined,
        headers: undefined,
        group: undefined,
        signal: undefined,
      }
      loop.post('work', 1, none)
      expect(loop.tryPost('work', 2, none).ok).toBe(true)
      loop.postDelayed('work', 3, 5, none)
      loop.postAt('work', 4, 5, none)
      const sent = loop.send('work', 5, { ...none, waitTimeoutMs: undefined, timeoutMs: undefined })
      const asked = loop.request('work', 6, { ...none, waitTimeoutMs: undefined, deadLetter: undefined })
      await clock.run()
      await expect(sent).resolves.toMatchObject({ payload: 5 })
      await expect(asked).resolves.toBe(6)
      expect(loop.metrics().counters).toMatchObject({ posted: 6, accepted: 6, rejected: 0, succeeded: 6 })
    })

    it.each([
      ['-1', -1],
      ['NaN', Number.NaN],
      ["'50'", '50'],
      ['Infinity', Number.POSITIVE_INFINITY],
      ['0', 0],
      ['null', null],
    ])('refuses `waitTimeoutMs: %s` as a counted refusal, with nothing admitted', async (_name, bad) => {
      const { loop, clock } = virtualLoop()
      const refusals: Error[] = []
      loop.events.on('rejected', (_type, error) => refusals.push(error))
      let ran = 0
      loop.on('work', () => void ran++)
      const error = await loop.request('work', 1, { waitTimeoutMs: bad as number, key: 'k' }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(InvalidArgumentError)
      const e = error as InvalidArgumentError
      expect(e.code).toBe('ERR_FLOWING_INVALID_ARGUMENT')
      expect(e.argument).toBe('options.waitTimeoutMs')
      expect(e.value).toBe(bad)
      expect(e.message).toMatch(/^Expected `options\.waitTimeoutMs` to be a positive finite number of ms, got /)
      expect(refusals).toEqual([error])
      await clock.run()
      expect(ran).toBe(0)
      const c = loop.metrics().counters
      expect(c).toMatchObject({ posted: 1, accepted: 0, rejected: 1 })
      expect(c.posted).toBe(c.accepted + c.rejected) // I1
      expect(loop.sideTableSize).toBe(0)
    })

    it('refuses a bad `deadLetter`, and an option whose getter throws, as counted refusals', async () => {
      const { loop } = virtualLoop()
      loop.on('work', () => {})
      const bad = (await loop.request('work', 1, { deadLetter: 'yes' as never }).catch((e: unknown) => e)) as Error
      expect(bad).toBeInstanceOf(InvalidArgumentError)
      expect(bad.message).toBe('Expected `options.deadLetter` to be a boolean, got `"yes"` (string)')
      const boom = new Error('getter')
      const options = Object.defineProperty({}, 'waitTimeoutMs', {
        enumerable: true,
        get: () => {
          throw boom
        },
      })
      const unreadable = (await loop.request('work', 2, options).catch((e: unknown) => e)) as InvalidArgumentError
      expect(unreadable).toBeInstanceOf(InvalidArgumentError)
      expect(unreadable.argument).toBe('options.waitTimeoutMs')
      expect(unreadable.cause).toBe(boom)
      expect(loop.metrics().counters).toMatchObject({ posted: 2, accepted: 0, rejected: 2 })
    })
  })

  describe('request() failures', () => {
    it('hands a failure to its caller: the handler’s own error, no dead letter, alert or new-failure log', async () => {
      const warnings: string[] = []
      const sunk: unknown[] = []
      const logged: string[] = []
      const { loop, clock } = virtualLoop({
        retry: { maxAttempts: 2, baseMs: 1, capMs: 1 },
        logger: { warn: (line: string) => void warnings.push(line) },
        deadLetters: { sink: { add: (letter) => void sunk.push(letter) } },
        messageLog: {
          info: (line) => void logged.push(`info ${line.outcome}`),
          warn: (line) => void logged.push(`warn ${line.outcome}`),
        },
      })
      const seen = watchFailures(loop)
      class CartError extends Error {}
      loop.on('work', () => {
        throw new CartError('empty cart')
      })
      const error = await (async () => {
        const answer = loop.request('work', 1).catch((e: unknown) => e)
        await clock.run()
        return answer
      })()
      expect(error).toBeInstanceOf(CartError)
      expect((error as Error).message).toBe('empty cart')
      expect(loop.deadLetters.list()).toEqual([])
      expect(seen).toMatchObject({ deadLettered: 0, alerts: 0, signatures: 0, failed: ['retry', 'caller'] })
      expect(warnings).toEqual([])
      expect(sunk).toEqual([])
      expect(logged).toEqual(['info request-failed'])
      expect(seen.finished).toHaveLength(1)
      expect(seen.finished[0]).toMatchObject({ outcome: 'request-failed', attempts: 2, reason: 'exhausted' })
      expect(seen.finished[0]?.error?.signature).toBe('Error: empty cart')
      const c = loop.metrics().counters
      expect(c).toMatchObject({ accepted: 1, requestFailed: 1, deadLettered: 0, failed: 2, alerts: 0 })
      expect(ended(c)).toBe(c.accepted) // I1
      expect(loop.sideTableSize).toBe(0)
    })

    it('rejects with a non-retryable error at once, and frees the key for the next message', async () => {
      const { loop, clock } = virtualLoop()
      const ran: number[] = []
      const declined = new NonRetryableError('card declined')
      const ids: string[] = []
      loop.events.on('finished', (m) => ids.push(m.id))
      loop.on('work', (m) => {
        ran.push(m.payload)
        if (m.payload === 1) throw declined
        return m.payload
      })
      const first = loop.request('work', 1, { key: 'card' }).catch((e: unknown) => e)
      const second = loop.request('work', 2, { key: 'card' })
      await clock.run()
      expect(await first).toBe(declined)
      await expect(second).resolves.toBe(2)
      expect(ran).toEqual([1, 2])
      expect(loop.trace(ids[0] as string)?.state).toBe('request-failed')
      expect(loop.metrics().counters).toMatchObject({ requestFailed: 1, succeeded: 1, deadLettered: 0 })
    })

    it('keeps the dead letter when the request asks for it (`deadLetter: true`), as for a post', async () => {
      const { loop, clock } = virtualLoop({ retry: { maxAttempts: 1 } })
      const seen = watchFailures(loop)
      const boom = new Error('boom')
      loop.on('work', () => {
        throw boom
      })
      const error = loop.request('work', 1, { deadLetter: true }).catch((e: unknown) => e)
      await clock.run()
      const e = (await error) as RequestFailedError
      expect(e).toBeInstanceOf(RequestFailedError)
      expect(e.outcome).toBe('dead-lettered')
      expect(e.cause).toBe(boom)
      expect(loop.deadLetters.list().map((l) => l.reason)).toEqual(['exhausted'])
      expect(seen).toMatchObject({ deadLettered: 1, alerts: 1, signatures: 1, failed: ['dead-letter'] })
      expect(seen.finished.map((s) => s.outcome)).toEqual(['dead-lettered'])
      expect(loop.metrics().counters).toMatchObject({ deadLettered: 1, requestFailed: 0, alerts: 1 })
    })

    it('dead-letters a failure whose request already gave up (nobody holds the error)', async () => {
      const { loop, clock } = virtualLoop({ retry: { maxAttempts: 1 } })
      loop.on('work', async () => {
        await clock.sleep(100)
        throw new Error('late')
      })
      const timedOut = loop.request('work', 1, { waitTimeoutMs: 10 }).catch((e: unknown) => e)
      await clock.run()
      expect(((await timedOut) as RequestFailedError).outcome).toBe('timed-out')
      expect(loop.metrics().counters).toMatchObject({ deadLettered: 1, requestFailed: 0 })
    })

    it('ends a failed request once in the journal: no dead letter kept, nothing back after a restart', async () => {
      const store = new MemoryStore()
      const clock = new VirtualClock()
      const { loop } = virtualLoop({ clock, store, retry: { maxAttempts: 1 } })
      loop.on('work', () => {
        throw new Error('boom')
      })
      loop.start()
      const error = loop.request('work', 1).catch((e: unknown) => e)
      const kept = loop.request('work', 2, { deadLetter: true }).catch((e: unknown) => e)
      await clock.run()
      expect(((await error) as Error).message).toBe('boom')
      expect(((await kept) as RequestFailedError).outcome).toBe('dead-lettered')
      await loop.flushed()
      expect(store.rows).toMatchObject({ messages: 0, deadLetters: 1 })
      await loop.stop()
      const next = virtualLoop({ clock, store: store.reopen(), retry: { maxAttempts: 1 } }).loop
      const ran: number[] = []
      next.on('work', (m) => void ran.push(m.payload))
      next.start()
      await clock.run()
      expect(ran).toEqual([])
      expect(next.deadLetters.list().map((l) => l.payload)).toEqual([2])
    })
  })
})
