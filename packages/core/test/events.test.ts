import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { LoopEmitter, type Message } from '../src/index.js'
import { catchRethrown, virtualLoop } from './fixtures.js'

const message = { id: 'm-1' } as unknown as Message

/** Runs `fn` with the loop's asynchronous re-throws collected, and lets them settle. */
async function rethrownBy(fn: () => void): Promise<unknown[]> {
  const rethrown = catchRethrown()
  try {
    fn()
    await Promise.resolve()
    await Promise.resolve()
  } finally {
    rethrown.restore()
  }
  return rethrown.errors
}

describe('LoopEmitter', () => {
  describe('emit()', () => {
    it('runs every listener even if an earlier one throws, reporting each error once, asynchronously', async () => {
      const events = new LoopEmitter()
      const calls: string[] = []
      const first = new Error('first listener bug')
      const second = new Error('second listener bug')
      events.on('requeued', () => {
        calls.push('a')
        throw first
      })
      events.on('requeued', () => {
        calls.push('b')
        throw second
      })
      events.on('requeued', (_m, attempt) => calls.push(`c${attempt}`))
      let returned: boolean | undefined
      let syncErrors = -1
      const rethrown = catchRethrown()
      try {
        returned = events.emit('requeued', message, 2)
        syncErrors = rethrown.errors.length
        await Promise.resolve()
      } finally {
        rethrown.restore()
      }
      expect(returned).toBe(true)
      expect(calls).toEqual(['a', 'b', 'c2'])
      expect(syncErrors).toBe(0) // nothing surfaced inside the emit
      expect(rethrown.errors).toEqual([first, second])
    })

    it('passes a hostile thrown value on untouched, and still runs the later listeners', async () => {
      const events = new LoopEmitter()
      const bare = Object.create(null) as object
      const hostile = new Proxy(
        {},
        {
          get: () => {
            throw new Error('trap: get')
          },
          has: () => {
            throw new Error('trap: has')
          },
          getPrototypeOf: () => {
            throw new Error('trap: getPrototypeOf')
          },
          ownKeys: () => {
            throw new Error('trap: ownKeys')
          },
        },
      )
      let reached = 0
      events.on('idle', () => {
        throw bare
      })
      events.on('idle', () => {
        throw hostile
      })
      events.on('idle', () => reached++)
      const errors = await rethrownBy(() => events.emit('idle'))
      expect(reached).toBe(1)
      expect(errors).toHaveLength(2)
      expect(errors[0]).toBe(bare)
      expect(errors[1] === hostile).toBe(true) // compared by identity only: reading it would trap
    })

    it('isolates a single throwing listener too, and returns false with none', async () => {
      const events = new LoopEmitter()
      expect(events.emit('idle')).toBe(false)
      events.on('idle', () => {
        throw new Error('alone')
      })
      let returned: boolean | undefined
      const errors = await rethrownBy(() => {
        returned = events.emit('idle')
      })
      expect(returned).toBe(true)
      expect(errors).toEqual([new Error('alone')])
    })

    it('keeps eventemitter3 semantics: once, context, and listeners added or removed during an emit', () => {
      const events = new LoopEmitter()
      const calls: string[] = []
      const context = { name: 'ctx' }
      const late = () => calls.push('late')
      const removed = () => calls.push('removed')
      events.once('idle', () => calls.push('once'))
      events.on(
        'idle',
        function (this: typeof context) {
          calls.push(this.name)
          events.on('idle', late) // waits for the next emit
          events.off('idle', removed) // this emit's snapshot still has it
        },
        context,
      )
      events.on('idle', removed)
      events.emit('idle')
      events.emit('idle')
      expect(calls).toEqual(['once', 'ctx', 'removed', 'ctx', 'late'])
      expect(events.listenerCount('idle')).toBe(3) // ctx, late, and late again (added twice)
    })

    it("never cuts the loop's bookkeeping short: every message is counted, the drain resolves", async () => {
      const { clock, loop } = virtualLoop()
      let exported = 0
      loop.events.on('succeeded', () => {
        throw new Error('alert hook bug')
      })
      loop.events.on('succeeded', () => exported++) // the metrics exporter registered after it
      loop.on('work', () => {})
      for (let i = 0; i < 3; i++) loop.post('work', i)
      const rethrown = catchRethrown()
      try {
        const drained = loop.drain()
        await clock.run()
        await drained
      } finally {
        rethrown.restore()
      }
      expect(exported).toBe(3)
      expect(rethrown.errors).toEqual([
        new Error('alert hook bug'),
        new Error('alert hook bug'),
        new Error('alert hook bug'),
      ])
      expect(loop.metrics().counters.succeeded).toBe(3)
    })
  })
})

describe('LoopEmitter.hears', () => {
  const names = ['posted', 'started', 'succeeded', 'idle'] as const
  type Name = (typeof names)[number]
  const op = fc.oneof(
    fc.record({
      kind: fc.constantFrom('on', 'addListener', 'once', 'off', 'removeListener'),
      name: fc.constantFrom(...names),
      fn: fc.nat(2),
    }),
    fc.record({
      kind: fc.constantFrom('removeAll', 'emit'),
      name: fc.option(fc.constantFrom(...names), { nil: undefined }),
      fn: fc.constant(0),
    }),
  )

  it('always equals heard() for the per-message events, whatever subscribes, unsubscribes or fires once', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const events = new LoopEmitter()
        const fns = [() => {}, () => {}, () => {}]
        const on = events as unknown as Record<string, (name: Name, fn?: () => void) => unknown>
        for (const { kind, name, fn } of ops) {
          if (kind === 'removeAll') events.removeAllListeners(name)
          else if (kind === 'emit') events.emit((name ?? 'posted') as 'idle')
          else on[kind]?.call(events, name as Name, fns[fn])
          for (const n of ['posted', 'started', 'succeeded'] as const) {
            expect(events.hears[n]).toBe(events.heard(n))
            expect(events.hears[n]).toBe(events.listenerCount(n) > 0)
          }
        }
      }),
    )
  })
})
