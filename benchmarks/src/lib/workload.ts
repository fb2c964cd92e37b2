/**
 * The messages every subject processes, generated once per process from a fixed seed so that all
 * subjects see the same keys and priorities, and the random number generator never runs inside a
 * timed loop.
 *
 * @module
 */
import { mulberry32 } from './random.js'

/** Message `i` has key `keys[i]` and priority `priorities[i]`; its payload is `i` (a small integer). */
export interface Workload {
  /** Number of messages. */
  readonly n: number
  /** Distinct keys: `keys[i]` is in `0 … keyCount − 1`. */
  readonly keyCount: number
  /** Partition key of each message. */
  readonly keys: Uint32Array
  /** Priority 0 (most urgent) … 9 of each message. */
  readonly priorities: Uint8Array
}

/** How priorities are drawn: uniformly from 0–9, or one fixed level for every message. */
export type PrioritySpec = 'random' | number

/**
 * Builds a workload of `n` messages over `keyCount` keys.
 * @example makeWorkload(1_000_000, 10_000, 'random') // 10k keys, priorities 0–9
 */
export function makeWorkload(n: number, keyCount: number, priority: PrioritySpec, seed = 0x5eed): Workload {
  const random = mulberry32(seed)
  const keys = new Uint32Array(n)
  const priorities = new Uint8Array(n)
  for (let i = 0; i < n; i++) {
    keys[i] = Math.floor(random() * keyCount)
    priorities[i] = priority === 'random' ? Math.floor(random() * 10) : priority
  }
  return { n, keyCount, keys, priorities }
}

/** How messages arrive. */
export type Mode = 'burst' | 'streamed'

/** Posts per event-loop turn in `streamed` mode. */
export const STREAM_BATCH = 1000

/**
 * Posts messages `0 … n − 1` through `postRange`: in `burst` mode in one synchronous call; in
 * `streamed` mode {@link STREAM_BATCH} per event-loop turn (`setImmediate` between batches), so the
 * consumer drains each batch before the next arrives and the queue stays shallow.
 *
 * @returns when the last message has been posted (not processed)
 */
export function feed(postRange: (from: number, to: number) => void, n: number, mode: Mode): Promise<void> {
  if (mode === 'burst') {
    postRange(0, n)
    return Promise.resolve()
  }
  return new Promise((resolve) => {
    let next = 0
    const turn = (): void => {
      const end = Math.min(next + STREAM_BATCH, n)
      postRange(next, end)
      next = end
      if (next < n) setImmediate(turn)
      else resolve()
    }
    turn()
  })
}

/**
 * The string form of the workload's keys, `order-${k}` for the same draw: one fresh string per message
 * (a key that arrives with its payload is a new string, whose hash the loop computes), built anew at
 * each call so no run inherits hashes cached in the strings by an earlier one. Call it before the clock
 * starts (a subject's `open()`).
 */
export function stringKeys(workload: Workload): string[] {
  return labelled(workload.n, 'order-', (i) => workload.keys[i] as number)
}

/**
 * One distinct idempotency key per message, `msg-${i}`, fresh strings as {@link stringKeys} builds them.
 */
export function idempotencyKeys(workload: Workload): string[] {
  return labelled(workload.n, 'msg-', (i) => i)
}

function labelled(n: number, prefix: string, numberOf: (i: number) => number): string[] {
  const out: string[] = [] // pushed, not pre-sized: a packed array, no hole checks on reads
  for (let i = 0; i < n; i++) out.push(`${prefix}${numberOf(i)}`)
  return out
}
