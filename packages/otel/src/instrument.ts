/**
 * `instrument(loop)`: a middleware that runs each attempt inside a consumer span, and a header stamper
 * that injects the poster's active context into every message posted.
 *
 * @module
 */
import {
  type HandlerContext,
  type HeaderStamper,
  InvalidArgumentError,
  type Message,
  type MessageMap,
  type Middleware,
} from '@flowing/core'
import { argumentChecks } from '@flowing/errors'
import {
  type Attributes,
  type Context,
  context,
  type MeterProvider,
  metrics,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  type TextMapPropagator,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api'
import { contextChecked } from './context-manager.js'
import { errorType, LoopMeters, type MeteredLoop } from './metrics.js'

/**
 * What `instrument` needs of a loop: `use` for the middleware, and `stamp` when the loop has it.
 *
 * @group Tracing
 */
export interface OtelLoop<M extends MessageMap = MessageMap> {
  /** Registers a middleware (see `Loop.use`). */
  use(middleware: Middleware<M>): unknown
  /** Registers a header stamper, called at every post (absent on loops without message headers). */
  stamp?(stamper: HeaderStamper): unknown
  /**
   * The loop's events (`Loop.events`): with them and `metrics`, finished messages, queue wait,
   * lifecycle and the gauges are measured.
   */
  readonly events?: object
  /** The loop's metrics (`Loop.metrics()`): only the gauges are read. */
  metrics?(): ReturnType<MeteredLoop['metrics']>
}

/**
 * Options of {@link instrument}. Unknown keys are refused with an `InvalidArgumentError`.
 *
 * @group Tracing
 */
export interface InstrumentOptions {
  /** Where spans come from. @defaultValue the global tracer provider (a no-op until an SDK registers) */
  readonly tracerProvider?: TracerProvider
  /** Injects and extracts the trace context in headers. @defaultValue the global propagator */
  readonly propagator?: TextMapPropagator
  /** Where the metrics' instruments come from. @defaultValue the global meter provider (a no-op until an SDK registers) */
  readonly meterProvider?: MeterProvider
}

/**
 * What {@link instrument} returns.
 *
 * @group Tracing
 */
export interface InstrumentHandle {
  /** Stops tracing: the middleware and stamper stay registered but pass everything through. */
  close(): void
  /** How many times the tracer or propagator threw; each time the message ran (or posted) untraced. */
  readonly failures: number
}

const KNOWN = ['tracerProvider', 'propagator', 'meterProvider'] as const
const check = argumentChecks(InvalidArgumentError)
const getter = {
  get: (h: Record<string, string>, k: string) => h[k],
  keys: (h: Record<string, string>) => Object.keys(h),
}

/**
 * Traces a loop with one line: `const otel = instrument(loop)`. Each attempt runs in a span named
 * `<type> process` (kind `CONSUMER`), a child of the context found in the message's headers; a failed
 * attempt ends with status `ERROR` and its exception recorded; follow-ups posted by the handler carry
 * the attempt span's context. A tracer or propagator that throws never fails a message: the message runs
 * untraced and {@link InstrumentHandle.failures} counts it.
 *
 * The parent–child links inside a process need a registered OpenTelemetry context manager (the API's
 * default is a no-op, as in a test with a bare `BasicTracerProvider`): without one, the attempt span is
 * not active in the handler and follow-ups start new traces. The first traced attempt checks it and, if
 * none is registered, emits a warning once per process (`process.emitWarning`, code
 * `FLOWING_OTEL_NO_CONTEXT_MANAGER`) naming the fix:
 * `context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())` from
 * `@opentelemetry/context-async-hooks`, or `provider.register()` on a `NodeTracerProvider`.
 *
 * @typeParam M - the loop's message map
 * @param loop - a Flowing loop (`createLoop()`)
 * @param options - see {@link InstrumentOptions}
 * @returns a handle to stop tracing
 * @throws InvalidArgumentError for an unknown option (with a "did you mean" hint for a typo)
 *
 * @group Tracing
 */
export function instrument<M extends MessageMap>(loop: OtelLoop<M>, options: InstrumentOptions = {}): InstrumentHandle {
  checkOptions(options)
  const tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer('@flowing/otel')
  const meter = (options.meterProvider ?? metrics.getMeterProvider()).getMeter('@flowing/otel')
  const meters = new LoopMeters(meter, metered(loop))
  const state = { open: true, failures: 0, contextChecked: false }
  const propagator = (): TextMapPropagator => options.propagator ?? propagation
  // The middleware reads only the fields every message has, whatever the loop's message map.
  loop.use(middleware(tracer, propagator, state, meters) as unknown as Middleware<M>)
  loop.stamp?.(() => (state.open ? stamp(propagator(), state) : undefined))
  return {
    close: () => {
      state.open = false
      meters.close()
    },
    get failures() {
      return state.failures
    },
  }
}

// The loop's events and gauges, when it has both (a Flowing `Loop` does).
function metered(loop: Pick<OtelLoop, 'events' | 'metrics'>): MeteredLoop | undefined {
  const events = loop.events as MeteredLoop['events'] | undefined
  const read = loop.metrics
  if (typeof events?.on !== 'function' || typeof events.off !== 'function' || read === undefined) return undefined
  return { events, metrics: () => read.call(loop) }
}

function checkOptions(options: InstrumentOptions): void {
  check.knownKeys('options', check.plainObject('options', options), KNOWN)
}

function stamp(propagator: TextMapPropagator, state: { failures: number }): Record<string, string> | undefined {
  try {
    const carrier: Record<string, string> = {}
    propagator.inject(context.active(), carrier, {
      set: (c: Record<string, string>, k: string, v: string) => {
        c[k] = v
      },
    })
    return Object.keys(carrier).length === 0 ? undefined : carrier
  } catch {
    state.failures++
    return undefined
  }
}

function headersOf(message: Message): Record<string, string> {
  return (message as { headers?: Record<string, string> }).headers ?? {}
}

function attributes(message: Message, attempt: number): Attributes {
  const attrs: Attributes = {
    'messaging.system': 'flowing',
    'messaging.operation': 'process',
    'messaging.message.id': message.id,
    'messaging.destination.name': message.type,
    'flowing.attempt': attempt,
    'flowing.priority': message.priority,
    'flowing.trace_id': message.traceId,
    'flowing.hops': message.hops,
  }
  if (message.key !== undefined) attrs['flowing.key'] = String(message.key)
  if (message.routeKey !== undefined) attrs['flowing.route'] = message.routeKey
  return attrs
}

function middleware(
  tracer: Tracer,
  propagator: () => TextMapPropagator,
  state: { open: boolean; failures: number; contextChecked: boolean },
  meters: LoopMeters,
): Middleware<MessageMap> {
  return (message: Message, ctx: HandlerContext, next: () => Promise<void>) => {
    if (!state.open) return next()
    const timed = () => measured(meters, message.type, next)
    let parent: Context
    try {
      parent = propagator().extract(ROOT_CONTEXT, headersOf(message), getter)
    } catch {
      state.failures++
      parent = ROOT_CONTEXT
    }
    let span: ReturnType<Tracer['startSpan']>
    try {
      span = tracer.startSpan(
        `${message.type} process`,
        { kind: SpanKind.CONSUMER, attributes: attributes(message, ctx.attempt) },
        parent,
      )
    } catch {
      state.failures++
      return timed()
    }
    return context.with(trace.setSpan(parent, span), () => {
      // Warns (once per process) when no context manager makes the span active here.
      if (!state.contextChecked) state.contextChecked = contextChecked(span)
      return run(span, timed)
    })
  }
}

// Runs an attempt and records its duration, with its error's type when it fails.
async function measured(meters: LoopMeters, type: string, next: () => Promise<void>): Promise<void> {
  const started = performance.now()
  try {
    await next()
  } catch (error) {
    meters.attempt(type, (performance.now() - started) / 1000, errorType(error))
    throw error
  }
  meters.attempt(type, (performance.now() - started) / 1000, undefined)
}

async function run(span: ReturnType<Tracer['startSpan']>, next: () => Promise<void>): Promise<void> {
  try {
    await next()
  } catch (error) {
    span.recordException(error instanceof Error ? error : String(error))
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) })
    throw error
  } finally {
    span.end()
  }
}
