import { createLoop, NonRetryableError, RetryableError, VirtualClock } from '@flowing/core'
import { Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { prometheus } from '../src/index.js'
import { types, value } from './scrape.js'

interface Messages {
  ok: number
  flaky: number
  bad: number
}

// A loop on virtual time: `ok` takes 5 ms, `flaky` fails its first attempt (2 ms each), `bad` is declined.
function orders() {
  const clock = new VirtualClock()
  const loop = createLoop<Messages>({
    clock,
    logger: false,
    workers: 1,
    capacity: 3,
    overflow: 'drop-new',
    retry: { maxAttempts: 3, baseMs: 10, jitter: 0 },
  })
  loop.on('ok', async () => {
    await clock.sleep(5)
  })
  let flakyRuns = 0
  loop.on('flaky', async () => {
    await clock.sleep(2)
    if (flakyRuns++ === 0) throw new RetryableError('503')
  })
  loop.on('bad', () => {
    throw new NonRetryableError('card declined')
  })
  return { clock, loop }
}

// Three successes of `ok`, a retried `flaky`, a dead-lettered `bad`, a dropped `ok`, a refused post.
async function busyDay(clock: VirtualClock, loop: ReturnType<typeof orders>['loop']): Promise<void> {
  loop.pause()
  loop.post('ok', 1)
  loop.post('ok', 2)
  loop.post('flaky', 3) // the queue is full now
  loop.post('ok', 4) // dropped (drop-new)
  expect(() => loop.post('nope' as 'ok', 0)).toThrow(/nope/)
  loop.postDelayed('ok', 5, 100)
  loop.resume()
  await clock.run()
  loop.post('bad', 6)
  await clock.run()
}

const L = { loop: 'orders' }

describe('prometheus()', () => {
  it('exports the counters of a real loop: successes, retries, a dead letter, a drop, a refusal', async () => {
    const { clock, loop } = orders()
    const registry = new Registry()
    const exporter = prometheus(loop, { registry, labels: { loop: 'orders' } })
    await busyDay(clock, loop)
    const text = await registry.metrics()

    const c = loop.metrics().counters
    expect(value(text, 'flowing_processed_total', { ...L, type: 'ok' })).toBe(3)
    expect(value(text, 'flowing_processed_total', { ...L, type: 'flaky' })).toBe(1)
    expect(value(text, 'flowing_processed_total', { ...L, type: 'bad' })).toBeUndefined()
    expect(value(text, 'flowing_failed_total', { ...L, type: 'flaky', error_class: 'retryable' })).toBe(1)
    expect(value(text, 'flowing_failed_total', { ...L, type: 'bad', error_class: 'non_retryable' })).toBe(1)
    expect(value(text, 'flowing_retries_total', { ...L, type: 'flaky' })).toBe(1)
    expect(value(text, 'flowing_dead_letter_total', { ...L, type: 'bad' })).toBe(1)
    expect(value(text, 'flowing_accepted_total', { ...L, type: 'ok' })).toBe(4) // 2 + the dropped one + the delayed one
    expect(value(text, 'flowing_posted_total', { ...L, type: 'nope' })).toBe(1)
    expect(
      value(text, 'flowing_rejected_total', { ...L, type: 'nope', reason: 'ERR_FLOWING_UNKNOWN_MESSAGE_TYPE' }),
    ).toBe(1)
    // The exporter's totals agree with the loop's own counters (I1: posted = accepted + rejected).
    const sum = (name: string) =>
      [...text.matchAll(new RegExp(`^${name}\\{[^}]*\\} (\\d+)$`, 'gm'))].reduce((s, m) => s + Number(m[1]), 0)
    expect(sum('flowing_posted_total')).toBe(c.posted)
    expect(sum('flowing_accepted_total')).toBe(c.accepted)
    expect(sum('flowing_rejected_total')).toBe(c.rejected)
    expect(sum('flowing_processed_total')).toBe(c.succeeded)
    expect(sum('flowing_failed_total')).toBe(c.failed)
    expect(sum('flowing_retries_total')).toBe(c.retried)
    expect(sum('flowing_dead_letter_total')).toBe(c.deadLettered)

    // Every metric has its HELP and TYPE lines, whether or not it has samples yet.
    const typed = types(text)
    for (const name of exporter.names) {
      expect(text).toContain(`# HELP ${name} `)
      expect(typed.has(name)).toBe(true)
    }
    expect(typed.get('flowing_processed_total')).toBe('counter')
    expect(typed.get('flowing_backlog')).toBe('gauge')
    expect(typed.get('flowing_handler_seconds')).toBe('histogram')
    exporter.unregister()
  })

  it('counts every outcome in finished_total and times queue wait and lifecycle from the finished event', async () => {
    const { clock, loop } = orders()
    const registry = new Registry()
    prometheus(loop, { registry, labels: { loop: 'orders' }, buckets: [0.001, 0.01, 0.1] })
    await busyDay(clock, loop)
    const text = await registry.metrics()
    const finished = (type: string, outcome: string) => value(text, 'flowing_finished_total', { ...L, type, outcome })
    expect(finished('ok', 'succeeded')).toBe(3)
    expect(finished('ok', 'dropped')).toBe(1)
    expect(finished('flaky', 'succeeded')).toBe(1)
    expect(finished('bad', 'dead_lettered')).toBe(1)
    const sum = [...text.matchAll(/^flowing_finished_total\{[^}]*\} (\d+)$/gm)].reduce((s, m) => s + Number(m[1]), 0)
    expect(sum).toBe(loop.metrics().counters.accepted) // one outcome per accepted message
    // `flaky` entered at 0, waited 10 ms behind two `ok`s, failed after 2 ms, backed off 10 ms, ran 2 ms.
    const flaky = { ...L, type: 'flaky', outcome: 'succeeded' }
    expect(value(text, 'flowing_lifecycle_seconds_sum', flaky)).toBeCloseTo(0.024, 10)
    expect(value(text, 'flowing_lifecycle_seconds_bucket', { ...flaky, le: '0.01' })).toBe(0)
    expect(value(text, 'flowing_lifecycle_seconds_bucket', { ...flaky, le: '0.1' })).toBe(1)
    // The `ok`s waited 0, 5 (behind the first) and 0 ms (the delayed one, when due).
    expect(value(text, 'flowing_queue_wait_seconds_count', { ...L, type: 'ok' })).toBe(3)
    expect(value(text, 'flowing_queue_wait_seconds_sum', { ...L, type: 'ok' })).toBeCloseTo(0.005, 10)
  })

  it('records each successful attempt in handler_seconds buckets (virtual time: exactly 5 ms and 2 ms)', async () => {
    const { clock, loop } = orders()
    const registry = new Registry()
    prometheus(loop, { registry, labels: { loop: 'orders' }, buckets: [0.001, 0.003, 0.01] })
    await busyDay(clock, loop)
    const text = await registry.metrics()
    const ok = { ...L, type: 'ok', result: 'succeeded' }
    expect(value(text, 'flowing_handler_seconds_bucket', { ...ok, le: '0.001' })).toBe(0)
    expect(value(text, 'flowing_handler_seconds_bucket', { ...ok, le: '0.003' })).toBe(0)
    expect(value(text, 'flowing_handler_seconds_bucket', { ...ok, le: '0.01' })).toBe(3)
    expect(value(text, 'flowing_handler_seconds_bucket', { ...ok, le: '+Inf' })).toBe(3)
    expect(value(text, 'flowing_handler_seconds_count', ok)).toBe(3)
    expect(value(text, 'flowing_handler_seconds_sum', ok)).toBeCloseTo(0.015, 10)
    const flaky = { ...L, type: 'flaky', result: 'succeeded' }
    expect(value(text, 'flowing_handler_seconds_bucket', { ...flaky, le: '0.003' })).toBe(1)
  })

  it('reads the gauges at scrape time: queued, held by an open breaker, backing off, delayed, running', async () => {
    const clock = new VirtualClock()
    const loop = createLoop<Messages>({
      clock,
      logger: false,
      workers: 2,
      capacity: 10,
      circuitBreaker: { consecutiveFailures: 1, cooldownMs: 1000 },
      retry: { maxAttempts: 5, baseMs: 50, jitter: 0 },
    })
    loop.on('ok', () => clock.sleep(100))
    loop.on('flaky', () => {
      throw new RetryableError('down')
    })
    loop.on('bad', () => {})
    const registry = new Registry()
    prometheus(loop, { registry, labels: { loop: 'orders' } })
    loop.post('flaky', 1) // fails at once, opens the breaker, backs off 50 ms
    await clock.advance(0)
    loop.post('flaky', 2) // held by the open breaker
    loop.post('ok', 3) // running for 100 ms
    loop.post('ok', 4, { key: 'k' })
    loop.post('ok', 5, { key: 'k' }) // parked behind key k
    loop.postDelayed('bad', 6, 500)
    await clock.advance(1)
    const g = loop.metrics().gauges
    expect(g).toMatchObject({ running: 2, held: 1, retrying: 1, delayed: 1 })
    const text = await registry.metrics()
    expect(value(text, 'flowing_running', L)).toBe(2)
    expect(value(text, 'flowing_held', L)).toBe(1)
    expect(value(text, 'flowing_retrying', L)).toBe(1)
    expect(value(text, 'flowing_delayed', L)).toBe(1)
    expect(value(text, 'flowing_queued', L)).toBe(g.queued)
    expect(value(text, 'flowing_queue_fill_ratio', L)).toBe(g.queued / 10)
    expect(value(text, 'flowing_workers', L)).toBe(2)
    // The seed's backlog counts what waits in memory too: everything accepted and not yet finished.
    expect(g.queued).toBe(3) // held, parked behind k, backing off: a retry keeps its place in the capacity
    expect(value(text, 'flowing_backlog', L)).toBe(g.queued + g.delayed + g.running)
    expect(value(text, 'flowing_backlog', L)).toBe(6)
    await loop.stop({ deadlineMs: 0 })
  })
})

describe('prometheus() with flow control', () => {
  it('counts waits for rate limits by scope, and gauges the limited, grouped and gate state', async () => {
    const clock = new VirtualClock()
    const loop = createLoop<Messages>({ clock, logger: false, workers: 4, groups: { concurrency: 1 } })
    loop.on('ok', () => clock.sleep(5), { rateLimit: { max: 1, perMs: 100 } })
    loop.on('flaky', () => clock.sleep(5))
    const registry = new Registry()
    const exporter = prometheus(loop, { registry, labels: { loop: 'flow' } })
    for (let i = 0; i < 3; i++) loop.post('ok', i)
    loop.post('flaky', 1, { group: 'g' })
    loop.post('flaky', 2, { group: 'g' })
    await clock.advance(1)
    const text = await registry.metrics()
    const L = { loop: 'flow' }
    expect(value(text, 'flowing_rate_limited_total', { ...L, type: 'ok', scope: 'type' })).toBe(2)
    expect(value(text, 'flowing_rate_limited', L)).toBe(2)
    expect(value(text, 'flowing_grouped', L)).toBe(1)
    expect(value(text, 'flowing_gate_closed', L)).toBe(0)
    await clock.run()
    expect(value(await registry.metrics(), 'flowing_rate_limited', L)).toBe(0)
    exporter.unregister()
  })
})
