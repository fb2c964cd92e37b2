/**
 * Flowing (`@flowing/core`, built output) as a benchmark subject: one message type, a counting no-op
 * async handler, every message with a key and a priority.
 *
 * @module
 */
import { createLoop, type Loop, type LoopOptions, type PriorityLevel } from '@flowing/core'
import { expectEqual } from './check.js'
import type { Session, SessionReport, Subject } from './subject.js'
import type { Workload } from './workload.js'

/** The benchmark's message map: one type whose payload is the message index. */
export interface BenchMessages {
  tick: number
}

/** Loop options that vary between Flowing rows. */
export interface FlowingVariant {
  readonly workers: number
  readonly queue: 'levels' | 'heap'
}

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

/** A Flowing subject with `variant`'s worker count and priority structure. */
export function flowingSubject(variant: FlowingVariant): Subject {
  const label = `Flowing ${variant.queue}, ${variant.workers} worker${variant.workers === 1 ? '' : 's'}`
  return {
    id: `flowing-${variant.queue}-w${variant.workers}`,
    label,
    memory: variant.workers === 8,
    open(workload: Workload, { paused }): Session {
      const loop = benchLoop(workload, variant, paused)
      let processed = 0
      loop.on('tick', async () => {
        processed++
      })
      const { keys, priorities } = workload
      return {
        postRange(from, to) {
          for (let i = from; i < to; i++) {
            loop.post('tick', i, { key: keys[i] as number, priority: priorities[i] as PriorityLevel })
          }
        },
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
