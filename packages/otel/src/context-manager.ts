/**
 * The check that an OpenTelemetry context manager is registered. Without one (the API's default is a
 * no-op), `context.with(ctx, fn)` runs `fn` in the root context: the attempt span is not active in
 * the handler, so the spans it starts and the follow-ups it posts silently lose their parent. The
 * check is made on the attempt's own context, at the start of a traced attempt, and warns once per
 * process.
 *
 * @module
 */
import { context, isSpanContextValid, type Span, trace } from '@opentelemetry/api'

/** The code of the warning emitted when no context manager is registered. */
export const NO_CONTEXT_MANAGER = 'FLOWING_OTEL_NO_CONTEXT_MANAGER'

const MESSAGE =
  '@flowing/otel: no OpenTelemetry context manager is registered, so the attempt span is not active in ' +
  'the handler: spans it starts and messages it posts lose their parent (each starts a new trace). ' +
  'Register one before the loop runs: `context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())` ' +
  "(from '@opentelemetry/context-async-hooks'), or call `provider.register()` on a NodeTracerProvider " +
  '(NodeSDK.start() does it).'

// Whether this process has been warned already.
let warned = false

/**
 * Called inside `context.with(trace.setSpan(parent, span), …)` at the start of an attempt. Returns
 * true once it knows the answer — the span is the active one, or the warning has been emitted — and
 * false while it cannot tell: an untraced attempt (a no-op tracer's span, nothing to lose).
 */
export function contextChecked(span: Span): boolean {
  if (warned) return true
  if (!isSpanContextValid(span.spanContext())) return false
  if (trace.getSpan(context.active()) === span) return true
  warned = true
  warn(MESSAGE)
  return true
}

// `process.emitWarning` with the code; `console.warn` where there is no `process`.
function warn(message: string): void {
  const g = globalThis as {
    process?: { emitWarning?: (m: string, o: { type: string; code: string }) => void }
    console?: { warn?: (m: string) => void }
  }
  if (typeof g.process?.emitWarning === 'function')
    g.process.emitWarning(message, { type: 'Warning', code: NO_CONTEXT_MANAGER })
  else g.console?.warn?.(`[${NO_CONTEXT_MANAGER}] ${message}`)
}
