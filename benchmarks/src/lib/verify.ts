/**
 * The invariant pass: Flowing runs the workload with a handler that checks, for every message,
 * BRIEF I2 (no two messages of one key run at once; equal-priority messages of a key start in post
 * order) and I1 (each message runs exactly once, and the metrics counters add up).
 *
 * Kept out of the timed runs: the checking handler costs more than the no-op it would be measuring.
 *
 * @module
 */
import type { PriorityLevel } from '@flowing/core'
import { BenchError, withDeadline } from './check.js'
import { benchLoop, checkLoopAtRest, type FlowingVariant } from './flowing.js'
import { feed, type Mode, stringKeys, type Workload } from './workload.js'

const RESOLVED = Promise.resolve()
const LEVELS = 10

/** Up to this many violations are listed in the error. */
const MAX_REPORTED = 5

/**
 * Runs `workload` through a fresh loop of `variant` in `mode` and checks I1/I2 message by message.
 * @returns a one-line summary of what held
 * @throws BenchError listing the first violations
 */
export async function verifyInvariants(
  workload: Workload,
  variant: FlowingVariant,
  mode: Mode,
  deadlineMs: number,
): Promise<string> {
  const { n, keyCount, keys, priorities } = workload
  // With string keys, message i is posted with `order-${keys[i]}`; the checks index by the integer.
  const given: readonly (string | number)[] = variant.keys === 'string' ? stringKeys(workload) : Array.from(keys)
  const what = `Flowing ${variant.queue}, ${variant.workers} workers, ${variant.keys === 'string' ? 'string keys, ' : ''}${mode}`
  const loop = benchLoop(workload, variant, false)
  // Last message index started per (key, priority): post order must hold among equal priority.
  const lastStarted = new Float64Array(keyCount * LEVELS).fill(-1)
  // Keys with a handler in flight.
  const running = new Uint8Array(keyCount)
  const runs = new Uint8Array(n)
  const problems: string[] = []
  let violations = 0
  const problem = (text: string): void => {
    violations++
    if (problems.length < MAX_REPORTED) problems.push(text)
  }
  loop.on('tick', async (m) => {
    const i = m.payload
    const key = keys[i] as number
    const priority = priorities[i] as number
    if (m.key !== given[i] || m.priority !== priority) {
      problem(`message ${i} ran with key ${String(m.key)}/priority ${m.priority}, posted with ${given[i]}/${priority}`)
    }
    if (running[key] === 1) problem(`key ${key}: message ${i} started while another message of that key ran (I2)`)
    running[key] = 1
    const slot = key * LEVELS + priority
    const previous = lastStarted[slot] as number
    if (previous >= i) problem(`key ${key}, priority ${priority}: message ${i} started after message ${previous} (I2)`)
    lastStarted[slot] = i
    runs[i] = (runs[i] as number) + 1
    // Stay "running" across two microtask hops so other workers' handlers interleave with this one.
    await RESOLVED
    await RESOLVED
    running[key] = 0
  })
  const postRange = (from: number, to: number): void => {
    for (let i = from; i < to; i++) loop.post('tick', i, { key: given[i], priority: priorities[i] as PriorityLevel })
  }
  await withDeadline(
    feed(postRange, n, mode).then(() => loop.drain()),
    deadlineMs,
    () => `${what}: invariant pass did not drain`,
  )
  for (let i = 0; i < n; i++) {
    if (runs[i] !== 1) problem(`message ${i} ran ${runs[i]} times (I1: exactly once)`)
  }
  if (violations > 0) {
    throw new BenchError(`${what}: ${violations} invariant violation(s):\n  - ${problems.join('\n  - ')}`)
  }
  checkLoopAtRest(what, loop, n)
  await loop.stop()
  return `${what}: ${n.toLocaleString('en-US')} messages, each ran once; per-key exclusivity and per-key order among equal priority held; counters add up`
}
