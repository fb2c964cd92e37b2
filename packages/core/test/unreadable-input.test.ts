/**
 * User values that throw when read — a getter or a `Proxy` in a snapshot handed to `restore()`, a
 * route selector that throws — become typed errors naming what was being read, with what was thrown
 * as `cause`, and nothing is half-done.
 */
import { describe, expect, it } from 'vitest'
import {
  InvalidArgumentError,
  type LoopSnapshot,
  SnapshotError,
  type SnapshotMessage,
  UnknownRouteError,
} from '../src/index.js'
import { thrown, virtualLoop } from './fixtures.js'

const boom = new Error('unreadable')
const throwing = () => {
  throw boom
}

function message(n: number): SnapshotMessage {
  return {
    id: `old:${n}`,
    type: 'work',
    payload: n,
    priority: 5,
    traceId: `t${n}`,
    hops: 0,
    state: 'queued',
    attempts: [],
  }
}

function snapshotOf(messages: readonly unknown[]): LoopSnapshot {
  return { format: 'flowing.snapshot', version: 1, takenAt: Date.now(), drained: false, messages } as LoopSnapshot
}

// A fresh loop that would run `work`, and what a refused restore must have left as it was.
function restoringLoop() {
  const { loop, clock } = virtualLoop({ autoStart: false })
  const ran: number[] = []
  loop.on('work', (m) => void ran.push(m.payload))
  const untouched = () => {
    expect(loop.metrics().counters).toMatchObject({ posted: 0, accepted: 0, restored: 0, rejected: 0 })
    expect(loop.queued).toBe(0)
    expect(loop.sideTableSize).toBe(0)
  }
  return { loop, clock, ran, untouched }
}

function expectSnapshotError(error: Error, path: string, cause: unknown): void {
  expect(error).toBeInstanceOf(SnapshotError)
  expect((error as SnapshotError).code).toBe('ERR_FLOWING_SNAPSHOT')
  expect((error as SnapshotError).path).toBe(path)
  expect(error.message).toBe(
    `Cannot restore the snapshot: \`${path}\` cannot be read (reading it threw Error: unreadable); nothing was restored`,
  )
  expect(error.cause).toBe(cause)
}

describe('Loop', () => {
  describe('restore() with fields that throw when read', () => {
    it('refuses a message of five whose getter throws, typed and naming it, with none of the five admitted', () => {
      const { loop, untouched } = restoringLoop()
      const messages: unknown[] = [1, 2, 3, 4, 5].map(message)
      messages[2] = Object.defineProperty({ ...message(3) }, 'priority', { enumerable: true, get: throwing })
      expectSnapshotError(
        thrown(() => loop.restore(snapshotOf(messages))),
        'messages[2].priority',
        boom,
      )
      untouched()
    })

    it('refuses a Proxy that throws: the snapshot, its list of messages, an attempt record', () => {
      const { loop, untouched } = restoringLoop()
      const hostile = new Proxy({}, { ownKeys: throwing })
      expect((thrown(() => loop.restore(hostile as LoopSnapshot)) as SnapshotError).cause).toBe(boom)
      const list = new Proxy([message(1), message(2)], { get: (t, k) => (k === '1' ? throwing() : Reflect.get(t, k)) })
      expectSnapshotError(
        thrown(() => loop.restore(snapshotOf(list))),
        'messages[1]',
        boom,
      )
      const attempt = Object.defineProperty({ attempt: 1, startedAt: 0, durationMs: 1, outcome: 'failed' }, 'error', {
        enumerable: true,
        get: throwing,
      })
      const retried = { ...message(1), attempts: [attempt] }
      expectSnapshotError(
        thrown(() => loop.restore(snapshotOf([retried]))),
        'messages[0].attempts[0].error',
        boom,
      )
      const revoked = Proxy.revocable({}, {})
      revoked.revoke()
      expect(thrown(() => loop.restore(snapshotOf([revoked.proxy])))).toBeInstanceOf(SnapshotError)
      untouched()
    })

    it('reads each field once: a getter that would throw on a second read cannot leave a restore half-done', async () => {
      const { loop, clock, ran } = restoringLoop()
      const messages: unknown[] = [1, 2, 3, 4, 5].map(message)
      let reads = 0
      messages[2] = Object.defineProperty({ ...message(3) }, 'key', {
        enumerable: true,
        get: () => {
          if (++reads > 1) throw boom
          return 'k'
        },
      })
      expect(loop.restore(snapshotOf(messages))).toBe(5)
      expect(reads).toBe(1)
      loop.start()
      await clock.run()
      expect(ran).toEqual([1, 2, 3, 4, 5])
    })

    it('refuses a re-admitted message whose getter throws (readmit)', () => {
      const { loop, untouched } = restoringLoop()
      const bad = Object.defineProperty({ ...message(1) }, 'type', { enumerable: true, get: throwing })
      expectSnapshotError(
        thrown(() => loop.readmit(bad)),
        'messages[0].type',
        boom,
      )
      untouched()
    })
  })

  describe('a route selector that throws', () => {
    it('refuses the post with InvalidArgumentError naming the selector, the type and the message (cause: the error)', () => {
      const { loop } = virtualLoop()
      const refusals: Error[] = []
      loop.events.on('rejected', (_type, error) => refusals.push(error))
      loop
        .route('order.updated', (m) => (m.payload.status === 'pending' ? throwing() : m.payload.status))
        .otherwise(() => {})
      const error = thrown(() => loop.post('order.updated', { orderId: 'o-1', status: 'pending' }))
      expect(error).toBeInstanceOf(InvalidArgumentError)
      const e = error as InvalidArgumentError
      expect(e.code).toBe('ERR_FLOWING_INVALID_ARGUMENT')
      expect(e.argument).toBe('selector')
      expect(e.cause).toBe(boom)
      expect(e.message).toMatch(
        /^Expected `selector` to be a function that returns the route key of every `order\.updated` message without throwing, got `\[function .*\]` \(function\); it threw Error: unreadable for message \S+:1$/,
      )
      expect(thrown(() => loop.tryPost('order.updated', { orderId: 'o-2', status: 'pending' }))).toBeInstanceOf(
        InvalidArgumentError,
      )
      expect(refusals).toHaveLength(2)
      expect(loop.metrics().counters).toMatchObject({ posted: 2, accepted: 0, rejected: 2 })
      expect(loop.sideTableSize).toBe(0)
    })

    it('keeps a Flowing error the selector throws as it is', () => {
      const { loop } = virtualLoop()
      const own = new UnknownRouteError('order.updated', 'x', [])
      loop.route('order.updated', () => {
        throw own
      })
      expect(thrown(() => loop.post('order.updated', { orderId: 'o', status: 'paid' }))).toBe(own)
    })

    it('fails a restore typed before anything is admitted, and runs the selector once per restored message', async () => {
      const { loop, clock } = virtualLoop({ autoStart: false })
      const seen: string[] = []
      loop
        .route('order.updated', (m) => {
          seen.push(m.id)
          return m.payload.status === 'pending' ? throwing() : m.payload.status
        })
        .otherwise(() => {})
      const order = (n: number, status: string): SnapshotMessage => ({
        ...message(n),
        type: 'order.updated',
        payload: { orderId: `o-${n}`, status },
      })
      const bad = snapshotOf([order(1, 'paid'), order(2, 'paid'), order(3, 'pending'), order(4, 'paid')])
      const error = thrown(() => loop.restore(bad)) as SnapshotError
      expect(error).toBeInstanceOf(SnapshotError)
      expect(error.path).toBe('messages[2].type')
      expect(error.cause).toBeInstanceOf(InvalidArgumentError)
      expect((error.cause as Error).cause).toBe(boom)
      expect(loop.metrics().counters).toMatchObject({ posted: 0, accepted: 0, restored: 0 })
      seen.length = 0
      expect(loop.restore(snapshotOf([order(1, 'paid'), order(2, 'refunded')]))).toBe(2)
      expect(seen).toEqual(['old:1', 'old:2']) // chosen while checking, not again when admitted
      loop.start()
      await clock.run()
      expect(loop.metrics().counters.succeeded).toBe(2)
    })
  })
})
