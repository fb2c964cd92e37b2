import { createLoop, NonRetryableError, RetryableError, VirtualClock } from '@flowing/core'
import type { HrTime } from '@opentelemetry/api'
import { type DataPoint, type Histogram, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics'
import { describe, expect, it } from 'vitest'
import { instrument } from '../src/index.js'

// A reader the test collects from when it wants (no export interval).
class OnDemand extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

type Point = DataPoint<number | Histogram> & { startTime: HrTime }

// Every data point of `name`, with its attributes.
async function points(reader: OnDemand, name: string): Promise<Point[]> {
  const { resourceMetrics } = await reader.collect()
  const metric = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === name)
  return (metric?.dataPoints ?? []) as Point[]
}

const find = (ps: Point[], attrs: Record<string, unknown>) =>
  ps.find((p) => Object.entries(attrs).every(([k, v]) => p.attributes[k] === v))

function setup() {
  const reader = new OnDemand()
  const meterProvider = new MeterProvider({ readers: [reader] })
  const clock = new VirtualClock()
  const loop = createLoop<{ job: number; bad: number }>({
    clock,
    logger: false,
    workers: 1,
    retry: { maxAttempts: 3, baseMs: 10, jitter: 0 },
  })
  return { reader, meterProvider, clock, loop }
}

describe('instrument() metrics', () => {
  it('measures attempts, outcomes, queue wait and lifecycle of a real loop through the meter', async () => {
    const { reader, meterProvider, clock, loop } = setup()
    instrument(loop, { meterProvider })
    let runs = 0
    loop.on('job', async () => {
      await clock.sleep(5)
      if (runs++ === 0) throw new RetryableError('503')
    })
    loop.on('bad', () => {
      throw new NonRetryableError('declined')
    })
    loop.post('job', 1)
    loop.post('bad', 2) // waits 5 ms behind the first attempt
    await clock.run()

    const attempts = await points(reader, 'messaging.process.duration')
    const failed = find(attempts, { 'messaging.destination.name': 'job', 'error.type': 'ERR_FLOWING_RETRYABLE' })
    expect((failed?.value as Histogram | undefined)?.count).toBe(1)
    const ok = attempts.find(
      (p) => p.attributes['messaging.destination.name'] === 'job' && !('error.type' in p.attributes),
    )
    expect((ok?.value as Histogram | undefined)?.count).toBe(1)
    expect(ok?.attributes).toMatchObject({ 'messaging.system': 'flowing', 'messaging.operation.name': 'process' })

    const finished = await points(reader, 'flowing.messages.finished')
    expect(find(finished, { 'messaging.destination.name': 'job', 'flowing.outcome': 'succeeded' })?.value).toBe(1)
    expect(find(finished, { 'messaging.destination.name': 'bad', 'flowing.outcome': 'dead-lettered' })?.value).toBe(1)

    // job: 5 ms, a 10 ms back-off, 5 ms — on virtual time, exactly.
    const lifecycle = await points(reader, 'flowing.message.lifecycle')
    const jobLife = find(lifecycle, { 'messaging.destination.name': 'job', 'flowing.outcome': 'succeeded' })
    expect((jobLife?.value as Histogram | undefined)?.sum).toBeCloseTo(0.02, 10)
    const wait = await points(reader, 'flowing.message.queue_wait')
    expect((find(wait, { 'messaging.destination.name': 'bad' })?.value as Histogram | undefined)?.sum).toBeCloseTo(
      0.005,
      10,
    )
    await loop.stop()
  })

  it("observes the loop's gauges at each collection, and stops reading the loop on close()", async () => {
    const { reader, meterProvider, clock, loop } = setup()
    const otel = instrument(loop, { meterProvider })
    loop.on('job', () => clock.sleep(100))
    loop.post('job', 1)
    loop.post('job', 2)
    loop.postDelayed('job', 3, 1000)
    await clock.advance(1)
    const gauges = await points(reader, 'flowing.messages')
    const state = (s: string) => find(gauges, { 'flowing.state': s })?.value
    expect([state('running'), state('queued'), state('delayed'), state('held')]).toEqual([1, 1, 1, 0])
    otel.close()
    loop.post('job', 4)
    await clock.run()
    const finished = await points(reader, 'flowing.messages.finished')
    expect(finished.reduce((n, p) => n + (p.value as number), 0)).toBe(0) // closed before any finished
    // No new observation: the gauges keep the values last read (cumulative), not today's empty loop.
    const after = await points(reader, 'flowing.messages')
    expect(find(after, { 'flowing.state': 'queued' })?.value).toBe(1)
    await loop.stop()
  })
})
