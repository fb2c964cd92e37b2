/**
 * Without a registered context manager (OTel's default is a no-op), the attempt span is not active in
 * the handler and follow-ups lose their parent: `instrument` warns once per process, naming the fix.
 * With one registered, no warning and the links hold. Each test imports a fresh copy of the package
 * (the "once" is per module instance) and leaves the global context manager unset.
 */
import { createLoop } from '@flowing/core'
import { context } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest'

type M = { parent: { n: number }; child: { n: number } }

const CODE = 'FLOWING_OTEL_NO_CONTEXT_MANAGER'
let warnings: MockInstance<typeof process.emitWarning>

beforeEach(() => {
  context.disable() // no context manager, whatever ran before
  warnings = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined)
})
afterEach(() => {
  warnings.mockRestore()
  context.disable()
})

// Our warnings among everything emitted.
const ours = () => warnings.mock.calls.filter(([, options]) => (options as { code?: string })?.code === CODE)

// A fresh copy of the package: its once-per-process flag starts unset.
async function fresh() {
  vi.resetModules()
  return import('../src/index.js')
}

// A traced loop whose `parent` handler starts a span and posts a `child` follow-up.
function tracedLoop(instrument: Awaited<ReturnType<typeof fresh>>['instrument']) {
  const exporter = new InMemorySpanExporter()
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const loop = createLoop<M>({ logger: false })
  instrument(loop, { tracerProvider, propagator: new W3CTraceContextPropagator() })
  const tracer = tracerProvider.getTracer('test')
  loop.on('parent', (m, ctx) => {
    tracer.startSpan('inside').end()
    ctx.post('child', { n: m.payload.n })
  })
  loop.on('child', () => {})
  return { exporter, loop }
}

async function run(loop: ReturnType<typeof tracedLoop>['loop'], messages: number): Promise<void> {
  loop.start()
  for (let n = 0; n < messages; n++) loop.post('parent', { n })
  await loop.stop({ drain: true })
}

describe('no context manager registered', () => {
  it('warns exactly once across loops and messages, naming the fix; the links are lost', async () => {
    const { instrument } = await fresh()
    const first = tracedLoop(instrument)
    await run(first.loop, 3)
    await run(tracedLoop(instrument).loop, 2)
    expect(ours()).toHaveLength(1)
    const [message] = ours()[0] ?? []
    expect(message).toContain('no OpenTelemetry context manager is registered')
    expect(message).toContain('context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())')
    expect(message).toContain('@opentelemetry/context-async-hooks')
    expect(message).toContain('provider.register()')
    // What the warning is about: the follow-ups and the handler's span have no parent.
    const spans = first.exporter.getFinishedSpans()
    const children = spans.filter((s) => s.name === 'child process' || s.name === 'inside')
    expect(children).toHaveLength(6)
    for (const s of children) expect(s.parentSpanContext).toBeUndefined()
  })

  it('does not warn when nothing is traced (no SDK: the global no-op tracer)', async () => {
    const { instrument } = await fresh()
    const loop = createLoop<M>({ logger: false })
    instrument(loop)
    loop.on('parent', (m, ctx) => ctx.post('child', { n: m.payload.n }))
    loop.on('child', () => {})
    loop.start()
    loop.post('parent', { n: 1 })
    await loop.stop({ drain: true })
    expect(ours()).toHaveLength(0)
  })
})

describe('a context manager registered', () => {
  it('no warning, and the handler span and the follow-up are children of the attempt span', async () => {
    const manager = new AsyncLocalStorageContextManager()
    context.setGlobalContextManager(manager.enable())
    try {
      const { instrument } = await fresh()
      const { exporter, loop } = tracedLoop(instrument)
      await run(loop, 2)
      expect(ours()).toHaveLength(0)
      const spans = exporter.getFinishedSpans()
      const parents = spans.filter((s) => s.name === 'parent process')
      expect(parents).toHaveLength(2)
      for (const name of ['inside', 'child process']) {
        const children = spans.filter((s) => s.name === name)
        expect(children).toHaveLength(2)
        for (const child of children) {
          const parent = parents.find((p) => p.spanContext().spanId === child.parentSpanContext?.spanId)
          expect(parent?.spanContext().traceId).toBe(child.spanContext().traceId)
        }
      }
    } finally {
      manager.disable()
    }
  })

  it('registered after instrument() but before the first message: no warning', async () => {
    const { instrument } = await fresh()
    const { loop } = tracedLoop(instrument)
    const manager = new AsyncLocalStorageContextManager()
    context.setGlobalContextManager(manager.enable())
    try {
      await run(loop, 1)
      expect(ours()).toHaveLength(0)
    } finally {
      manager.disable()
    }
  })
})
