/**
 * Counts the Flowing errors built while a function runs, to show that a refused `tryPost` builds none
 * until its `error` is read.
 *
 * Every error a refusal can carry is a `FlowingError`, whose constructor assigns `this.name`. For the
 * probe's duration `FlowingError.prototype` gets a `name` accessor whose setter counts the assignment
 * and defines the own property the assignment would have made, so the errors built are unchanged.
 * The caller proves the probe works by reading one result's `error` inside it (the count must rise).
 *
 * @module
 */
import { FlowingError } from '@flowing/core'

/**
 * Runs `body` with the counter installed and returns what it returned with the number of
 * `FlowingError`s constructed meanwhile. The prototype is restored afterwards, also on a throw.
 */
export function countFlowingErrors<T>(body: (built: () => number) => T): { result: T; built: number } {
  const proto = FlowingError.prototype
  const original = Object.getOwnPropertyDescriptor(proto, 'name')
  let built = 0
  Object.defineProperty(proto, 'name', {
    configurable: true,
    get(): string {
      return Object.getPrototypeOf(proto).name as string
    },
    set(this: object, value: unknown) {
      built++
      Object.defineProperty(this, 'name', { value, writable: true, enumerable: true, configurable: true })
    },
  })
  try {
    const result = body(() => built)
    return { result, built }
  } finally {
    if (original === undefined) Reflect.deleteProperty(proto, 'name')
    else Object.defineProperty(proto, 'name', original)
  }
}
