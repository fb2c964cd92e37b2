/**
 * Flowing (`@flowing/core`, built output) as a benchmark subject: one message type, a counting no-op
 * async handler, every message with a key and a priority.
 *
 * @module
 */
import { createLoop, type Loop, type LoopOptions, type PriorityLevel } from '@flowing/core'
import { expectEqual } from './check.js'
import type { Session, SessionReport, Subject } from './subject.js'
import { stringKeys, type Workload } from './workload.js'

/** The benchmark's message map: one type whose payload is the message index. */
export interface BenchMessages {
  tick: number
}

/** Loop options that vary between Flowing rows. */
export interface FlowingVariant {
  readonly workers: number
  readonly queue: 'levels' | 'heap'
  /** Integer keys (`keys[i]`, the default) or their string form (`order-${keys[i]}`). */
  readonly keys?: KeyKind
}

/** How a message's key is given: the integer drawn, or `order-` and that integer. */
export type KeyKind = 'int' | 'string'

/** A loop sized for the whole workload (the burst backlog must fit: no refusals). */
export function benchLoop(workload: Workload, variant: FlowingVariant, paused: boolean): Loop<BenchMessages> {
  const options: LoopOptions = {
    capacity: Math.max(1, workload.n),
    workers: variant.workers,
    queue: variant.queue,
    autoStart: !paused,
  }
  return createLoop<BenchMessages>(options)
}

/**
 * Checks I1's bookkeeping at rest: every post accepted, every accepted message succeeded, nothing
 * waiting or running.
 * @throws BenchError naming the first counter that disagrees
 */
export function checkLoopAtRest(what: string, loop: Loop<BenchMessages>, posted: number): void {
  const { counters, gauges } = loop.metrics()
  expectEqual(`${what}: metrics.counters.posted`, counters.posted, posted)
  expectEqual(`${what}: metrics.counters.accepted`, counters.accepted, posted)
  expectEqual(`${what}: metrics.counters.succeeded`, counters.succeeded, posted)
  for (const name of ['rejected', 'failed', 'dropped', 'cancelled'] as const) {
    expectEqual(`${what}: metrics.counters.${name}`, counters[name], 0)
  }
  expectEqual(`${what}: metrics.gauges.queued`, gauges.queued, 0)
  expectEqual(`${what}: metrics.gauges.running`, gauges.running, 0)
}

/** A Flowing subject with `variant`'s worker count, priority structure and key kind. */
export function flowingSubject(variant: FlowingVariant): Subject {
  const strings = variant.keys === 'string'
  const workers = `${variant.workers} worker${variant.workers === 1 ? '' : 's'}`
  const label = `Flowing ${variant.queue}, ${workers}${strings ? ', string keys' : ''}`
  return {
    id: `flowing-${variant.queue}-w${variant.workers}${strings ? '-str' : ''}`,
    label,
    memory: variant.workers === 8,
    open(workload: Workload, { paused }): Session {
      const loop = benchLoop(workload, variant, paused)
      let processed = 0
      loop.on('tick', async () => {
        processed++
      })
      const { keys, priorities } = workload
      // Two loops, not one with a conditional: each posting call site sees one key type.
      const postRange = strings
        ? postStrings(loop, stringKeys(workload), priorities)
        : (from: number, to: number): void => {
            for (let i = from; i < to; i++) {
              loop.post('tick', i, { key: keys[i] as number, priority: priorities[i] as PriorityLevel })
            }
          }
      return {
        postRange,
        start: () => void loop.start(),
        idle: () => loop.drain(),
        async close(posted): Promise<SessionReport> {
          const { queueWait } = loop.metrics()
          checkLoopAtRest(label, loop, posted)
          await loop.stop()
          return { processed, queueWait: { p50: queueWait.p50, p99: queueWait.p99 } }
        },
      }
    },
  }
}

function postStrings(
  loop: Loop<BenchMessages>,
  keys: readonly string[],
  priorities: Uint8Array,
): (from: number, to: number) => void {
  return (from, to) => {
    for (let i = from; i < to; i++) {
      loop.post('tick', i, { key: keys[i] as string, priority: priorities[i] as PriorityLevel })
    }
  }
}
