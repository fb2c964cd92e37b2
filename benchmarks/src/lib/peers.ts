/**
 * The peers, run with the same no-op async handler and concurrency 8: fastq (promise and callback
 * APIs; no priorities, no keys) and p-queue (without and with random priorities; no keys).
 *
 * @module
 */
import fastq from 'fastq'
import PQueue from 'p-queue'
import { expectEqual } from './check.js'
import type { Session, Subject } from './subject.js'
import type { Workload } from './workload.js'

/** Concurrency of every peer, matching Flowing's 8 workers. */
export const PEER_CONCURRENCY = 8

const noop = (): void => {}

/** fastq's promise API: `push()` returns a promise per message. */
export const fastqPromise: Subject = {
  id: 'fastq-promise',
  label: 'fastq, promise API',
  memory: true,
  // fastq has neither keys nor priorities: the workload's only use is its length, which the harness owns.
  open(_workload: Workload, { paused }): Session {
    let processed = 0
    const q = fastq.promise<unknown, number, void>(async () => {
      processed++
    }, PEER_CONCURRENCY)
    if (paused) q.pause()
    return {
      postRange(from, to) {
        for (let i = from; i < to; i++) void q.push(i)
      },
      start: () => q.resume(),
      idle: () => q.drained(),
      async close() {
        expectEqual('fastq promise: idle()', q.idle(), true)
        return { processed }
      },
    }
  },
}

/**
 * fastq's callback API. The worker calls the same async no-op handler as every other subject and
 * calls `done` when its promise settles (what fastq's own promise wrapper does, minus the promise per
 * push).
 */
export const fastqCallback: Subject = {
  id: 'fastq-callback',
  label: 'fastq, callback API',
  memory: true,
  open(_workload: Workload, { paused }): Session {
    let processed = 0
    const handler = async (): Promise<void> => {
      processed++
    }
    const q = fastq<unknown, number, void>((_i, done) => {
      handler().then(() => done(null), done)
    }, PEER_CONCURRENCY)
    if (paused) q.pause()
    return {
      postRange(from, to) {
        for (let i = from; i < to; i++) q.push(i, noop)
      },
      start: () => q.resume(),
      idle: () =>
        q.idle()
          ? Promise.resolve()
          : new Promise<void>((resolve) => {
              q.drain = () => {
                q.drain = noop
                resolve()
              }
            }),
      async close() {
        expectEqual('fastq callback: idle()', q.idle(), true)
        return { processed }
      },
    }
  },
}

/** p-queue, concurrency 8; with `priorities`, each `add()` passes the message's random priority. */
export function pQueueSubject(priorities: boolean): Subject {
  const label = priorities ? 'p-queue, random priorities' : 'p-queue, no priority'
  return {
    id: priorities ? 'p-queue-priority' : 'p-queue',
    label,
    // A queued p-queue element has the same shape with or without a priority, and a paused 1M-message
    // insert with random priorities is O(n²): the no-priority row stands for both.
    memory: !priorities,
    open(workload: Workload, { paused }): Session {
      let processed = 0
      const task = async (): Promise<void> => {
        processed++
      }
      const queue = new PQueue({ concurrency: PEER_CONCURRENCY, autoStart: !paused })
      const levels = workload.priorities
      return {
        postRange: priorities
          ? (from, to) => {
              for (let i = from; i < to; i++) void queue.add(task, { priority: levels[i] as number })
            }
          : (from, to) => {
              for (let i = from; i < to; i++) void queue.add(task)
            },
        start: () => void queue.start(),
        idle: () => queue.onIdle(),
        async close() {
          expectEqual(`${label}: size + pending`, queue.size + queue.pending, 0)
          return { processed }
        },
      }
    },
  }
}
