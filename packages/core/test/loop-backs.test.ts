import { Watchdog } from '@flowing/watchdog'
import { describe, expect, it } from 'vitest'
import { VirtualClock } from '../src/clock.js'
import type { MessageMap } from '../src/contracts/message.js'
import { LoopBacks, type LoopBackTargets } from '../src/engine/loop-backs.js'
import { type Envelope, Where } from '../src/internal/envelope.js'
import { Limiter } from '../src/limits/limiter.js'

/** Targets that record what reached them. */
function targets(calls: string[]): LoopBackTargets<MessageMap> {
  return {
    stopper: { cutOff: () => calls.push('cutOff'), failureExit: () => calls.push('failureExit') },
    entries: { replay: () => calls.push('replay') },
    cancels: { cancel: (_m, why) => calls.push(`cancel ${why}`) },
    admission: { enterDue: () => calls.push('enterDue') > 0 },
    pacing: { onPressure: () => calls.push('onPressure'), waiting: 0 },
    pool: { running: 0, pump: () => calls.push('pump'), attempts: () => [], detach: () => calls.push('detach') > 0 },
    failures: {
      succeeded: (m) => calls.push(`succeeded ${String(m)}`),
      retries: { size: 0, due: (m) => calls.push(`retry due ${m.id}`) },
    },
    queue: { length: 0 },
    delayed: { overdue: 0, due: (m) => calls.push(`delayed due ${m.id}`) },
    watchdog: { onDue: () => calls.push('deadline') },
    limits: { due: (_l, now) => calls.push(`limit due at ${now}`) },
    schedules: { cameDue: (m) => calls.push(`came due ${m.id}`) },
  }
}

describe('LoopBacks', () => {
  it('refuses a loop-back that runs before the loop is built, loudly', () => {
    const backs = new LoopBacks<MessageMap>({ now: () => 7 }, 10)
    expect(() => backs.cutOff()).toThrow('Flowing internal error: a loop-back ran before the loop was built')
    expect(() => backs.running()).toThrow(/before the loop was built/)
  })

  it('tells whether work is left from the queue, the pool, the delayed posts and the retries', () => {
    const backs = new LoopBacks<MessageMap>({ now: () => 7 }, 10)
    const t = targets([])
    const work = { queue: { length: 0 }, pool: { ...t.pool, running: 0 }, delayed: { ...t.delayed, overdue: 0 } }
    const retries = { ...t.failures.retries, size: 0 }
    backs.bind({ ...t, ...work, failures: { ...t.failures, retries } })
    expect(backs.workLeft()).toBe(false)
    for (const [holder, field] of [
      [work.queue, 'length'],
      [work.pool, 'running'],
      [work.delayed, 'overdue'],
      [retries, 'size'],
    ] as const) {
      ;(holder as Record<string, number>)[field] = 1
      expect(backs.workLeft()).toBe(true)
      ;(holder as Record<string, number>)[field] = 0
    }
    expect(backs.workLeft()).toBe(false)
  })

  it('reports the load from the queue, the pool and the producers waiting in send()', () => {
    const backs = new LoopBacks<MessageMap>({ now: () => 7 }, 10)
    const t = targets([])
    backs.bind({
      ...t,
      queue: { length: 3 },
      pool: { ...t.pool, running: 2 },
      pacing: { ...t.pacing, waiting: 1 },
    })
    expect(backs.load()).toEqual({ queued: 3, capacity: 10, running: 2, waitingProducers: 1 })
  })

  it('routes each due item of the wheel to its owner, and skips one no holder has any more', () => {
    const calls: string[] = []
    const backs = new LoopBacks<MessageMap>({ now: () => 7 }, 10)
    backs.bind(targets(calls))
    const at = (where: Where, id: string) => ({ where, id }) as unknown as Envelope
    const watchdog = new Watchdog({ timers: new VirtualClock(), graceMs: 0 })
    const deadline = watchdog.guard({ timeoutMs: 1_000, label: 'x' })
    const limiter = Object.create(Limiter.prototype) as Limiter
    backs.due([at(Where.Backoff, 'r'), deadline, limiter, at(Where.Delayed, 'd'), at(Where.Done, 'gone')])
    expect(calls).toEqual(['retry due r', 'deadline', 'limit due at 7', 'delayed due d'])
  })

  it('binds once: a second bind is an internal error', () => {
    const backs = new LoopBacks<MessageMap>({ now: () => 7 }, 10)
    backs.bind(targets([]))
    expect(() => backs.bind(targets([]))).toThrow('Flowing internal error: the loop-backs are bound twice')
  })

  it('reaches the bound stages, and schedules one pump per synchronous burst', async () => {
    const calls: string[] = []
    const backs = new LoopBacks<MessageMap>({ now: () => 7 }, 10)
    backs.bind(targets(calls))
    backs.cutOff()
    backs.cancel(undefined as never, 'why')
    for (let i = 0; i < 5; i++) backs.schedulePump()
    expect(calls).toEqual(['cutOff', 'cancel why'])
    await Promise.resolve()
    expect(calls).toEqual(['cutOff', 'cancel why', 'pump'])
    backs.schedulePump()
    await Promise.resolve()
    expect(calls.filter((c) => c === 'pump')).toHaveLength(2)
  })
})
