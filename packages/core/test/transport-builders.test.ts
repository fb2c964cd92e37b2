/**
 * What core shares with transports (`@flowing/nats`): the status of a refusal by the error `post`
 * threw, the state a watermark refusal reports, and the dead letter's builder — each the one the loop
 * itself uses, so a distributed loop's results and letters read like an in-process loop's.
 */
import { describe, expect, it } from 'vitest'
import {
  type DeadLetter,
  deadLetterOf,
  errorInfo,
  InvalidArgumentError,
  type PostResult,
  refusalStatusOf,
  VirtualClock,
} from '../src/index.js'
import { type Messages, virtualLoop } from './fixtures.js'

describe('refusalStatusOf()', () => {
  it("gives the status the loop's own tryPost gives, for every refusal it can throw", async () => {
    const refusals: PostResult<Messages, 'work'>[] = []
    const loopOf = (o: Parameters<typeof virtualLoop>[0]) => {
      const made = virtualLoop(o)
      made.loop.on('work', () => {})
      return made
    }
    const full = loopOf({ capacity: 1, autoStart: false }).loop
    full.post('work', 1)
    refusals.push(full.tryPost('work', 2))
    const pressured = loopOf({ capacity: 100, autoStart: false, backpressure: true }).loop
    for (let n = 0; n < 80; n++) pressured.post('work', n, { priority: 0 })
    refusals.push(pressured.tryPost('work', 1, { priority: 7 })) // shed
    for (let n = 0; n < 15; n++) pressured.post('work', n, { priority: 0 })
    refusals.push(pressured.tryPost('work', 1, { priority: 0 })) // reject
    const keyed = loopOf({ autoStart: false }).loop
    keyed.post('work', 1, { idempotencyKey: 'k' })
    refusals.push(keyed.tryPost('work', 2, { idempotencyKey: 'k' }))
    const { loop: stopped, clock } = loopOf({})
    const stopping = stopped.stop()
    refusals.push(stopped.tryPost('work', 1))
    await clock.run()
    await stopping
    refusals.push(stopped.tryPost('work', 1))
    const statuses = refusals.map((r) => (r.ok || r.status === 'dropped' ? 'admitted' : r.status))
    expect(statuses).toEqual(['full', 'shed', 'reject', 'duplicate', 'stopped', 'stopped'])
    for (const r of refusals) if (!r.ok && r.status !== 'dropped') expect(refusalStatusOf(r.error)).toBe(r.status)
  })

  it('gives undefined for an error tryPost throws: bad input, anything else', () => {
    expect(refusalStatusOf(new InvalidArgumentError('type', 'a non-empty string', ''))).toBeUndefined()
    expect(refusalStatusOf(new Error('no connection'))).toBeUndefined()
    expect(refusalStatusOf('not even an error')).toBeUndefined()
  })
})

describe('deadLetterOf()', () => {
  it('builds the letter the loop writes, from the message, its last failure and attempts', async () => {
    const { loop, clock } = virtualLoop({ retry: { maxAttempts: 2, baseMs: 10, jitter: 0 } })
    loop.on('work', () => {
      throw new Error('broken downstream')
    })
    const letters: DeadLetter[] = []
    loop.events.on('dead-lettered', (_m, letter) => void letters.push(letter))
    loop.post('work', 7, { key: 'k', priority: 3 })
    await clock.run()
    const [letter] = letters
    if (letter === undefined) throw new Error('no dead letter')
    expect(deadLetterOf(letter, letter.error, letter.attempts, clock, letter.at)).toEqual({
      ...letter,
      atEpochMs: clock.wallNow(),
    })
    expect(letter).toMatchObject({ reason: 'exhausted', errorClass: 'unknown', atEpochMs: clock.wallNow() })
  })

  it('says non-retryable for a failure classified so, and stamps both clock readings', () => {
    const clock = new VirtualClock(250, 1_000_000)
    const m = {
      id: 'm-1',
      type: 'work',
      payload: 1,
      key: undefined,
      priority: 5,
      routeKey: undefined,
      traceId: 'm-1',
    } as const
    const letter = deadLetterOf(m, errorInfo(new Error('bad input'), 'non-retryable'), [], clock)
    expect(letter).toMatchObject({ ...m, reason: 'non-retryable', errorClass: 'non-retryable', at: 250 })
    expect(letter).toMatchObject({ atEpochMs: 1_000_250, attempts: [] })
    expect(letter.error).toMatchObject({ name: 'Error', message: 'bad input', signature: 'Error: bad input' })
  })
})
