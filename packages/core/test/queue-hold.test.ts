import { describe, expect, it } from 'vitest'
import type { Envelope } from '../src/internal/envelope.js'
import { StartFilters } from '../src/queue/start-filters.js'
import { type HoldingStage, type HoldQueue, QueueHold } from '../src/shutdown/holders.js'

const message = (seq: number) => ({ seq, id: `m${seq}` }) as unknown as Envelope

/** A queue that records which of its operations a hold calls, and with what. */
function recordingQueue(calls: string[]): HoldQueue {
  const q = {
    markHeld: (m: Envelope) => calls.push(`markHeld ${m.seq}`),
    markLimited: (m: Envelope) => calls.push(`markLimited ${m.seq}`),
    resume: (m: Envelope) => calls.push(`resume ${m.seq}`),
    forget: (m: Envelope) => calls.push(`forget ${m.seq}`),
  }
  return q as unknown as HoldQueue
}

/** A stage keeping `kept`. */
function stage(kept: Envelope[]): HoldingStage {
  return {
    get held() {
      return kept.length
    },
    clear: () => kept.splice(0),
    find: (seq) => kept.find((m) => m.seq === seq),
    remove: (m) => {
      const i = kept.indexOf(m)
      if (i < 0) return false
      kept.splice(i, 1)
      return true
    },
  }
}

describe('QueueHold: the one writer of a hold’s queue accounting', () => {
  it('marks a kept message by its kind, and puts it back to compete when its stage lets it go', () => {
    const calls: string[] = []
    const breaker = new QueueHold(stage([]), recordingQueue(calls), new StartFilters(), 'breaker')
    const limit = new QueueHold(stage([]), recordingQueue(calls), new StartFilters(), 'limit')
    breaker.enter(message(1))
    limit.enter(message(2))
    breaker.leave(message(1))
    limit.leave(message(2))
    expect(calls).toEqual(['markHeld 1', 'markLimited 2', 'resume 1', 'resume 2'])
  })

  it('hands every kept message over with its snapshot state, forgetting each place and key', () => {
    const calls: string[] = []
    const kept = [message(1), message(2)]
    const hold = new QueueHold(stage(kept), recordingQueue(calls), new StartFilters(), 'breaker')
    expect(hold.size).toBe(2)
    expect(hold.takeAll().map(({ m, state }) => `${m.seq} ${state}`)).toEqual(['1 held', '2 held'])
    expect(calls).toEqual(['forget 1', 'forget 2'])
    expect(hold.size).toBe(0)
    const limited = new QueueHold(stage([message(3)]), recordingQueue([]), new StartFilters(), 'limit')
    expect(limited.takeAll().map(({ state }) => state)).toEqual(['queued'])
  })

  it('removes one message (a cancel) with its place and key, and nothing it does not keep', () => {
    const calls: string[] = []
    const m = message(7)
    const hold = new QueueHold(stage([m]), recordingQueue(calls), new StartFilters(), 'limit')
    expect(hold.find(7)).toBe(m)
    expect(hold.remove(message(8))).toBe(false)
    expect(calls).toEqual([])
    expect(hold.remove(m)).toBe(true)
    expect(calls).toEqual(['forget 7'])
    expect(hold.find(7)).toBeUndefined()
  })

  it('sets its kind’s start filter on the queue once: the first filter stays', () => {
    const queue = recordingQueue([])
    const starts = new StartFilters()
    const first = () => true
    new QueueHold(stage([]), queue, starts, 'breaker').filterStarts(first)
    new QueueHold(stage([]), queue, starts, 'breaker').filterStarts(() => false)
    new QueueHold(stage([]), queue, starts, 'limit').filterStarts(first)
    expect(starts.hold).toBe(first)
    expect(starts.limit).toBe(first)
  })
})
