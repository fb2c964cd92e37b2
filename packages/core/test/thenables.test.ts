import { describe, expect, it } from 'vitest'
import { HandlerTimeoutError } from '../src/index.js'
import { catchRethrown, virtualLoop } from './fixtures.js'

// Handler results that are thenable without being promises, each misbehaving in its own way.
const boom = new Error('then exploded')
const misbehaving = {
  'a `then` getter that throws': () =>
    Object.defineProperty({}, 'then', {
      get() {
        throw boom
      },
    }),
  'a then() that throws synchronously': () => ({
    // biome-ignore lint/suspicious/noThenProperty: the thenable under test
    then() {
      throw boom
    },
  }),
  'a then() that calls both callbacks': () => ({
    // biome-ignore lint/suspicious/noThenProperty: the thenable under test
    then(resolve: (v: unknown) => void, reject: (e: unknown) => void) {
      resolve('first')
      reject(boom)
    },
  }),
  'a then() that calls back twice': () => ({
    // biome-ignore lint/suspicious/noThenProperty: the thenable under test
    then(resolve: (v: unknown) => void) {
      resolve(1)
      resolve(2)
    },
  }),
  'a then() that rejects, then throws': () => ({
    // biome-ignore lint/suspicious/noThenProperty: the thenable under test
    then(_resolve: (v: unknown) => void, reject: (e: unknown) => void) {
      reject(boom)
      throw new Error('ignored: the first settle won')
    },
  }),
  'a native promise whose own `then` is a throwing getter': () =>
    Object.defineProperty(Promise.resolve(), 'then', {
      get() {
        throw boom
      },
    }),
  'a native promise whose own then() calls back twice': () => {
    const p = Promise.resolve()
    Object.defineProperty(p, 'then', {
      value(resolve: (v: unknown) => void) {
        resolve(1)
        resolve(2)
      },
    })
    return p
  },
} as const
const outcome: Record<keyof typeof misbehaving, 'succeeded' | 'failed'> = {
  'a `then` getter that throws': 'failed',
  'a then() that throws synchronously': 'failed',
  'a then() that calls both callbacks': 'succeeded',
  'a then() that calls back twice': 'succeeded',
  'a then() that rejects, then throws': 'failed',
  'a native promise whose own `then` is a throwing getter': 'failed',
  'a native promise whose own then() calls back twice': 'succeeded',
}

describe('WorkerPool', () => {
  describe('a handler returning a misbehaving thenable', () => {
    for (const [name, make] of Object.entries(misbehaving) as [keyof typeof misbehaving, () => unknown][]) {
      it(`ends the attempt exactly once, frees its slot and lets stop() resolve: ${name}`, async () => {
        const rethrown = catchRethrown()
        try {
          const { clock, loop } = virtualLoop({ workers: 1, retry: { maxAttempts: 1 } })
          const ends: string[] = []
          loop.events.on('succeeded', (m) => ends.push(`succeeded ${m.payload}`))
          loop.events.on('failed', (m, error) => ends.push(`failed ${m.payload} ${(error as Error).message}`))
          loop.on('work', (m) => (m.payload === 1 ? make() : undefined) as never)
          loop.post('work', 1)
          loop.post('work', 2) // needs the one worker the thenable held
          const stopped = loop.stop()
          await clock.run()
          await stopped
          const first = outcome[name] === 'succeeded' ? 'succeeded 1' : `failed 1 ${boom.message}`
          expect(ends).toEqual([first, 'succeeded 2'])
          expect(loop.state).toBe('stopped')
          expect(loop.running).toBe(0)
          expect(rethrown.errors).toEqual([])
        } finally {
          rethrown.restore()
        }
      })
    }

    it('treats a thenable that never calls back as a promise that never settles: its deadline applies', async () => {
      const { clock, loop } = virtualLoop({ workers: 1, timeoutMs: 50, retry: { maxAttempts: 1 } })
      const errors: unknown[] = []
      loop.events.on('failed', (_m, error) => errors.push(error))
      // biome-ignore lint/suspicious/noThenProperty: the thenable under test
      loop.on('work', () => ({ then() {} }) as never)
      loop.post('work', 1)
      await clock.advance(60)
      expect(errors).toHaveLength(1)
      expect(errors[0]).toBeInstanceOf(HandlerTimeoutError)
      expect(loop.running).toBe(0)
    })

    it('reads the `then` of a thenable once', async () => {
      const { clock, loop } = virtualLoop({ workers: 1 })
      let reads = 0
      const thenable = {
        // biome-ignore lint/suspicious/noThenProperty: the thenable under test
        get then() {
          reads++
          return (resolve: (v: unknown) => void) => resolve(undefined)
        },
      }
      loop.on('work', () => thenable as never)
      loop.post('work', 1)
      await clock.run()
      expect(reads).toBe(1)
      expect(loop.metrics().counters.succeeded).toBe(1)
    })
  })
})
