import { Writable } from 'node:stream'
import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import {
  type FinishedSummary,
  InvalidArgumentError,
  type MessageLogLine,
  NonRetryableError,
  RetryableError,
} from '../src/index.js'
import { catchRethrown, thrown, virtualLoop } from './fixtures.js'

/** Every `finished` event, in order, and every event of the watched ids before it. */
function watch(loop: ReturnType<typeof virtualLoop>['loop']) {
  const summaries = new Map<string, FinishedSummary>()
  const order: string[] = []
  for (const event of ['succeeded', 'dead-lettered', 'dropped', 'cancelled', 'finished'] as const) {
    loop.events.on(event, (m: { id: string }, summary?: unknown) => {
      order.push(`${event} ${m.id}`)
      if (event === 'finished') summaries.set(m.id, summary as FinishedSummary)
    })
  }
  return { summaries, order }
}

/** A logger that keeps what it is given, at which level. */
function collecting() {
  const lines: { level: 'info' | 'warn'; line: MessageLogLine; message: string }[] = []
  return {
    lines,
    info: (line: MessageLogLine, message: string) => lines.push({ level: 'info', line, message }),
    warn: (line: MessageLogLine, message: string) => lines.push({ level: 'warn', line, message }),
  }
}

describe('the finished event', () => {
  it('summarizes a success: one attempt, its wait and run time, the time in the loop', async () => {
    const { loop, clock } = virtualLoop({ workers: 1 })
    const { summaries, order } = watch(loop)
    loop.on('work', () => clock.sleep(30))
    const first = loop.post('work', 1)
    const second = loop.post('work', 2) // waits 30 ms behind the first
    await clock.run()
    expect(summaries.get(first.id)).toEqual({
      outcome: 'succeeded',
      attempts: 1,
      lifecycleMs: 30,
      waitMs: 0,
      durationMs: 30,
    })
    expect(summaries.get(second.id)).toEqual({
      outcome: 'succeeded',
      attempts: 1,
      lifecycleMs: 60,
      waitMs: 30,
      durationMs: 30,
    })
    expect(order).toEqual([
      `succeeded ${first.id}`,
      `finished ${first.id}`,
      `succeeded ${second.id}`,
      `finished ${second.id}`,
    ])
  })

  it('counts retries and their back-off in the lifecycle, the last attempt in wait and run time', async () => {
    const { loop, clock } = virtualLoop({ retry: { maxAttempts: 3, baseMs: 100, jitter: 0 } })
    const { summaries } = watch(loop)
    loop.on('work', async (_m, ctx) => {
      await clock.sleep(10)
      if (ctx.attempt < 3) throw new RetryableError('503')
    })
    const m = loop.post('work', 1)
    await clock.run()
    // 10 ms, 100 ms back-off, 10 ms, 200 ms back-off, 10 ms
    expect(summaries.get(m.id)).toEqual({
      outcome: 'succeeded',
      attempts: 3,
      lifecycleMs: 330,
      waitMs: 0,
      durationMs: 10,
    })
  })

  it('gives a dead letter its reason and last error, after the dead-lettered event', async () => {
    const { loop, clock } = virtualLoop()
    const { summaries, order } = watch(loop)
    loop.on('work', async () => {
      await clock.sleep(5)
      throw new NonRetryableError('card declined')
    })
    const m = loop.post('work', 1)
    await clock.run()
    expect(summaries.get(m.id)).toMatchObject({
      outcome: 'dead-lettered',
      attempts: 1,
      lifecycleMs: 5,
      waitMs: 0,
      durationMs: 5,
      reason: 'non-retryable',
      error: { errorClass: 'non-retryable', message: 'card declined' },
    })
    expect(order).toEqual([`dead-lettered ${m.id}`, `finished ${m.id}`])
  })

  it('reports drops with their reason and messages that never ran with no attempts', async () => {
    const { loop, clock } = virtualLoop({ capacity: 1, overflow: 'drop-new', autoStart: false })
    const { summaries } = watch(loop)
    loop.on('work', () => undefined)
    loop.post('work', 1)
    const dropped = loop.post('work', 2)
    const delayed = loop.postDelayed('work', 3, 1000)
    await clock.advance(200)
    delayed.cancel()
    expect(summaries.get(dropped.id)).toEqual({
      outcome: 'dropped',
      attempts: 0,
      lifecycleMs: 0,
      waitMs: undefined,
      durationMs: undefined,
      reason: 'drop-new',
    })
    expect(summaries.get(delayed.message.id)).toMatchObject({
      outcome: 'cancelled',
      attempts: 0,
      lifecycleMs: 200,
      waitMs: undefined,
    })
  })

  it('reports what a stop hands back as snapshotted, with the attempts it made', async () => {
    const { loop, clock } = virtualLoop({ retry: { maxAttempts: 3, baseMs: 1000, jitter: 0 } })
    const { summaries } = watch(loop)
    loop.on('work', async () => {
      await clock.sleep(10)
      throw new RetryableError('503')
    })
    const m = loop.post('work', 1)
    await clock.advance(20) // failed once, backing off
    const stopping = loop.stop({ deadlineMs: 0 })
    await clock.run()
    const snapshot = await stopping
    expect(snapshot?.messages.map((s) => s.id)).toEqual([m.id])
    expect(summaries.get(m.id)).toMatchObject({
      outcome: 'snapshotted',
      attempts: 1,
      waitMs: undefined,
      durationMs: 10,
      reason: 'retry-scheduled',
    })
  })
})

describe('the messageLog option', () => {
  it('writes one line per finished message: info for successes, warn for dead letters and drops', async () => {
    const log = collecting()
    const { loop, clock } = virtualLoop({ messageLog: log, capacity: 2, overflow: 'drop-new' })
    loop.on('order.paid', () => clock.sleep(4))
    loop.on('work', () => {
      throw new NonRetryableError('bad')
    })
    const ok = loop.post('order.paid', { orderId: 'o-1', amount: 1 }, { key: 'o-1' })
    const bad = loop.post('work', 1)
    const dropped = loop.post('work', 2)
    await clock.run()
    expect(log.lines.map((l) => [l.level, l.line.id, l.line.outcome, l.message])).toEqual([
      ['warn', dropped.id, 'dropped', 'message finished'],
      ['warn', bad.id, 'dead-lettered', 'message finished'],
      ['info', ok.id, 'succeeded', 'message finished'],
    ])
    expect(log.lines[2]?.line).toEqual({
      id: ok.id,
      type: 'order.paid',
      key: 'o-1',
      traceId: ok.id,
      outcome: 'succeeded',
      attempts: 1,
      lifecycleMs: 4,
      waitMs: 0,
      durationMs: 4,
    })
  })

  it('fits pino: one JSON line per message with the fields at the top level', async () => {
    const out: string[] = []
    const stream = new Writable({
      write(chunk, _encoding, done) {
        out.push(String(chunk))
        done()
      },
    })
    const logger = pino({ base: null, timestamp: false }, stream)
    const { loop, clock } = virtualLoop({ messageLog: logger })
    loop.on('work', () => clock.sleep(2))
    const m = loop.post('work', 7, { key: 42 })
    await clock.run()
    await new Promise((resolve) => setImmediate(resolve))
    expect(out.map((line) => JSON.parse(line))).toEqual([
      {
        level: 30,
        id: m.id,
        type: 'work',
        key: 42,
        traceId: m.id,
        outcome: 'succeeded',
        attempts: 1,
        lifecycleMs: 2,
        waitMs: 0,
        durationMs: 2,
        msg: 'message finished',
      },
    ])
  })

  it('fits console (info and warn taking an object and a string)', async () => {
    const { loop, clock } = virtualLoop({ messageLog: console })
    const printed: unknown[][] = []
    const original = console.info
    console.info = (...args: unknown[]) => printed.push(args)
    try {
      loop.on('work', () => undefined)
      loop.post('work', 1)
      await clock.run()
    } finally {
      console.info = original
    }
    expect(printed).toHaveLength(1)
    expect(printed[0]?.[1]).toBe('message finished')
    expect(printed[0]?.[0]).toMatchObject({ type: 'work', outcome: 'succeeded' })
  })

  it('keeps a throwing logger out of the outcome: the message is counted, the error re-thrown on a microtask', async () => {
    const rethrown = catchRethrown()
    try {
      const boom = new Error('log sink down')
      const { loop, clock } = virtualLoop({
        messageLog: {
          info: () => {
            throw boom
          },
          warn: () => undefined,
        },
      })
      const finished: string[] = []
      loop.events.on('finished', (m) => finished.push(m.id))
      loop.on('work', () => undefined)
      const m = loop.post('work', 1)
      await clock.run()
      await loop.drain()
      expect(loop.metrics().counters.succeeded).toBe(1)
      expect(finished).toEqual([m.id]) // the event still fires after the failed log line
      expect(rethrown.errors).toEqual([boom])
    } finally {
      rethrown.restore()
    }
  })

  it('refuses a logger without info or warn, naming the missing method, and suggests the name of a typo', () => {
    const noWarn = thrown(() => virtualLoop({ messageLog: { info: () => undefined } as never }))
    expect(noWarn).toBeInstanceOf(InvalidArgumentError)
    expect(noWarn.message).toContain('options.messageLog.warn')
    const notObject = thrown(() => virtualLoop({ messageLog: true as never }))
    expect(notObject).toBeInstanceOf(InvalidArgumentError)
    expect(notObject.message).toContain('options.messageLog')
    const typo = thrown(() => virtualLoop({ messageLogs: console } as never))
    expect(typo.message).toContain('messageLog')
  })
})
