import { createLoop, InvalidArgumentError } from '@flowing/core'
import { SpanKind, SpanStatusCode, type TracerProvider } from '@opentelemetry/api'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { describe, expect, it } from 'vitest'
import { instrument } from '../src/index.js'

type M = { job: { n: number } }

function setup() {
  const exporter = new InMemorySpanExporter()
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  return { exporter, tracerProvider }
}

describe('instrument', () => {
  it('a message failing once then succeeding gives two attempt spans, the first ERROR with the exception', async () => {
    const { exporter, tracerProvider } = setup()
    const loop = createLoop<M>({ retry: { maxAttempts: 3, baseMs: 1, jitter: 0 } })
    const otel = instrument(loop, { tracerProvider })
    let calls = 0
    loop.on('job', () => {
      calls++
      if (calls === 1) throw new Error('boom')
    })
    loop.start()
    loop.post('job', { n: 1 }, { key: 'k1' })
    await loop.stop({ drain: true })
    const spans = exporter.getFinishedSpans()
    expect(spans.map((s) => s.name)).toEqual(['job process', 'job process'])
    expect(spans.map((s) => s.attributes['flowing.attempt'])).toEqual([1, 2])
    const [first, second] = spans
    expect(first?.kind).toBe(SpanKind.CONSUMER)
    expect(first?.status.code).toBe(SpanStatusCode.ERROR)
    expect(first?.events.map((e) => e.name)).toEqual(['exception'])
    expect(first?.events[0]?.attributes?.['exception.message']).toBe('boom')
    expect(second?.status.code).toBe(SpanStatusCode.UNSET)
    expect(second?.attributes).toMatchObject({
      'messaging.system': 'flowing',
      'messaging.operation': 'process',
      'messaging.destination.name': 'job',
      'flowing.key': 'k1',
    })
    expect(first?.attributes['messaging.message.id']).toBe(second?.attributes['messaging.message.id'])
    expect(otel.failures).toBe(0)
  })

  it('a dead-lettered message leaves one ERROR span per attempt', async () => {
    const { exporter, tracerProvider } = setup()
    const loop = createLoop<M>({ retry: { maxAttempts: 2, baseMs: 1, jitter: 0 } })
    instrument(loop, { tracerProvider })
    let letters = 0
    loop.events.on('dead-lettered', () => letters++)
    loop.on('job', () => {
      throw new Error('always')
    })
    loop.start()
    loop.post('job', { n: 1 })
    await loop.stop({ drain: true })
    const spans = exporter.getFinishedSpans()
    expect(letters).toBe(1)
    expect(spans.map((s) => [s.attributes['flowing.attempt'], s.status.code])).toEqual([
      [1, SpanStatusCode.ERROR],
      [2, SpanStatusCode.ERROR],
    ])
  })

  it('refuses an option typo with a hint', () => {
    const loop = createLoop<M>()
    expect(() => instrument(loop, { tracerProvidr: {} } as never)).toThrow(InvalidArgumentError)
    expect(() => instrument(loop, { tracerProvidr: {} } as never)).toThrow(/did you mean `tracerProvider`/)
  })

  it('a tracer that throws never fails the message: it runs untraced and is counted', async () => {
    const hostile: TracerProvider = {
      getTracer: () => ({
        startSpan: () => {
          throw new Error('tracer down')
        },
        startActiveSpan: () => {
          throw new Error('tracer down')
        },
      }),
    }
    const loop = createLoop<M>()
    const otel = instrument(loop, { tracerProvider: hostile })
    const seen: number[] = []
    loop.on('job', (msg) => {
      seen.push(msg.payload.n)
    })
    loop.start()
    loop.post('job', { n: 7 })
    await loop.stop({ drain: true })
    expect(seen).toEqual([7])
    expect(otel.failures).toBe(1)
  })

  it('close() stops tracing', async () => {
    const { exporter, tracerProvider } = setup()
    const loop = createLoop<M>()
    instrument(loop, { tracerProvider }).close()
    loop.on('job', () => {})
    loop.start()
    loop.post('job', { n: 1 })
    await loop.stop({ drain: true })
    expect(exporter.getFinishedSpans()).toEqual([])
  })
})
