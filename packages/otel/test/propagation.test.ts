/**
 * Trace context travels in message headers: a post inside a span makes the handler's attempt span
 * its child, a follow-up posted by a handler is a child of that attempt's span, and a retry's attempt
 * stays in the same trace — with the real SDK, AsyncLocalStorage context and the W3C propagator.
 */
import { createLoop } from '@flowing/core'
import { context, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { instrument } from '../src/index.js'

type M = { parent: { n: number }; child: { n: number } }

const manager = new AsyncLocalStorageContextManager()
beforeAll(() => void context.setGlobalContextManager(manager.enable()))
afterAll(() => {
  manager.disable()
  context.disable()
})

function traced() {
  const exporter = new InMemorySpanExporter()
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const loop = createLoop<M>({ logger: false, retry: { maxAttempts: 3, baseMs: 1, jitter: 0 } })
  instrument(loop, { tracerProvider, propagator: new W3CTraceContextPropagator() })
  return { exporter, loop, tracer: tracerProvider.getTracer('test') }
}

describe('trace context in headers', () => {
  it('a post inside a span: the handler span is its child; a follow-up is a child of the attempt span', async () => {
    const { exporter, loop, tracer } = traced()
    const headers: Record<string, string>[] = []
    loop.on('parent', (m, ctx) => {
      headers.push({ ...m.headers })
      ctx.post('child', { n: m.payload.n })
    })
    loop.on('child', () => {})
    loop.start()
    const producer = tracer.startSpan('produce')
    context.with(trace.setSpan(context.active(), producer), () => loop.post('parent', { n: 1 }))
    producer.end()
    await loop.stop({ drain: true })
    const spans = exporter.getFinishedSpans()
    const byName = (name: string) => spans.find((s) => s.name === name)
    const parent = byName('parent process')
    const child = byName('child process')
    const produced = byName('produce')
    expect(headers[0]?.['traceparent']).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/)
    expect(parent?.spanContext().traceId).toBe(produced?.spanContext().traceId)
    expect(parent?.parentSpanContext?.spanId).toBe(produced?.spanContext().spanId)
    expect(child?.spanContext().traceId).toBe(produced?.spanContext().traceId)
    expect(child?.parentSpanContext?.spanId).toBe(parent?.spanContext().spanId)
  })

  it('a retried message: both attempt spans are children of the producer, in one trace', async () => {
    const { exporter, loop, tracer } = traced()
    let calls = 0
    loop.on('parent', () => {
      if (calls++ === 0) throw new Error('once')
    })
    loop.start()
    const producer = tracer.startSpan('produce')
    context.with(trace.setSpan(context.active(), producer), () => loop.post('parent', { n: 1 }))
    producer.end()
    await loop.stop({ drain: true })
    const attempts = exporter.getFinishedSpans().filter((s) => s.name === 'parent process')
    expect(attempts.map((s) => s.attributes['flowing.attempt'])).toEqual([1, 2])
    for (const s of attempts) {
      expect(s.spanContext().traceId).toBe(producer.spanContext().traceId)
      expect(s.parentSpanContext?.spanId).toBe(producer.spanContext().spanId)
    }
  })
})
