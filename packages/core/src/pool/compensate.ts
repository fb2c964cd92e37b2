/**
 * A type's compensation hook (`compensate` on registration), run once after a timeout under its own
 * deadline; what it ends with is reported (`compensated`), never thrown into the loop.
 *
 * @module
 */
import type { Attempt } from '@flowing/watchdog'
import type { Message } from '../contracts/message.js'
import type { Envelope } from '../internal/envelope.js'

/** A compensation hook as registered. */
export type CompensationHook = (message: Message, context: { readonly signal: AbortSignal }) => unknown

/**
 * Runs `hook` for `m` under `guard` (its own deadline); `report` gets `undefined` when it finished,
 * or the error it threw, rejected with or timed out with — once, whichever comes first.
 */
export function compensate(
  m: Envelope,
  hook: CompensationHook,
  guard: Pick<Attempt, 'signal' | 'done' | 'fail'>,
  report: (error: unknown) => void,
): void {
  let result: unknown
  try {
    result = hook(m as unknown as Message, {
      get signal() {
        return guard.signal
      },
    })
  } catch (error) {
    if (guard.fail()) report(error)
    return
  }
  Promise.resolve(result).then(
    () => guard.done() && report(undefined),
    (error: unknown) => guard.fail() && report(error),
  )
}
