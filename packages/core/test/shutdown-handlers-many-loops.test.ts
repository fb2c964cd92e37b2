/**
 * `installShutdownHandlers()` over several loops, or installed twice on one process: one exit, after
 * every loop drained and every hook ran in order, 1 when any step failed.
 */
import { describe, expect, it, vi } from 'vitest'
import {
  createLoop,
  InvalidArgumentError,
  installShutdownHandlers,
  type SignalSource,
  VirtualClock,
} from '../src/index.js'
import { type Messages, thrown, virtualLoop } from './fixtures.js'

describe('Loop', () => {
  describe('installShutdownHandlers() with several loops', () => {
    // A process whose signals reach every listener (as Node's do).
    function fakeProcess() {
      const listeners: [string, (signal: NodeJS.Signals) => void][] = []
      const exits: number[] = []
      const proc: SignalSource = {
        on: (signal, listener) => listeners.push([signal, listener]),
        removeListener: (signal, listener) => {
          const i = listeners.findIndex(([s, l]) => s === signal && l === listener)
          if (i >= 0) listeners.splice(i, 1)
        },
        exit: (code) => exits.push(code ?? 0),
      }
      const send = (s: NodeJS.Signals) => {
        for (const [signal, listener] of [...listeners]) if (signal === s) listener(s)
      }
      return { proc, exits, send, listeners }
    }
    // A loop whose one message takes `ms` of virtual time.
    function busyLoop(clock: VirtualClock, ms: number) {
      const loop = createLoop<Messages>({ clock, logger: false })
      loop.on('work', () => clock.sleep(ms))
      loop.post('work', ms)
      return loop
    }

    it('exits once, after every loop drained and every hook ran, in order', async () => {
      const clock = new VirtualClock()
      const fast = busyLoop(clock, 10)
      const slow = busyLoop(clock, 500)
      const { proc, exits, send, listeners } = fakeProcess()
      const steps: string[] = []
      installShutdownHandlers([fast, slow], {
        process: proc,
        deadlineMs: 1_000,
        beforeStop: [() => steps.push('http closed')],
        onSnapshot: (s, _signal, i) => steps.push(`snapshot ${i}: ${s.messages.length}`),
        close: [() => steps.push('pool closed')],
      })
      send('SIGTERM')
      await clock.advance(100)
      expect(exits).toEqual([]) // the fast loop is done; the slow one still drains
      await clock.advance(500)
      await vi.waitFor(() => expect(exits).toEqual([0]))
      expect(steps).toEqual(['http closed', 'snapshot 0: 0', 'snapshot 1: 0', 'pool closed'])
      expect(listeners).toHaveLength(0)
      expect(slow.metrics().counters.succeeded).toBe(1)
    })

    it('waits for a second installation on the same process, and exits 1 when any step failed', async () => {
      const clock = new VirtualClock()
      const first = busyLoop(clock, 10)
      const second = busyLoop(clock, 300)
      const { proc, exits, send } = fakeProcess()
      const errors = vi.spyOn(console, 'error').mockImplementation(() => {})
      installShutdownHandlers(first, { process: proc, deadlineMs: 1_000 })
      installShutdownHandlers(second, {
        process: proc,
        deadlineMs: 1_000,
        close: [
          () => {
            throw new Error('pool would not close')
          },
        ],
      })
      send('SIGTERM')
      await clock.advance(50)
      expect(exits).toEqual([]) // the first installation finished: it must not end the process yet
      await clock.advance(300)
      await vi.waitFor(() => expect(exits).toEqual([1]))
      expect(second.metrics().counters.succeeded).toBe(1)
      expect(errors).toHaveBeenCalled()
      errors.mockRestore()
    })

    it('refuses a list without loops, and hooks that are not functions', () => {
      expect(thrown(() => installShutdownHandlers([]))).toBeInstanceOf(InvalidArgumentError)
      const { loop } = virtualLoop()
      const error = thrown(() => installShutdownHandlers(loop, { close: [5 as never] }))
      expect(error).toBeInstanceOf(InvalidArgumentError)
      expect(error.message).toContain('options.close[0]')
    })
  })
})
