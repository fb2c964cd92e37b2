import { describe, expect, it } from 'vitest'
import { Entries, type EntryParts } from '../src/admission/entries.js'
import { HopLimitError, InvalidArgumentError } from '../src/errors.js'
import { Envelope } from '../src/internal/envelope.js'
import { LoopMetrics } from '../src/metrics/loop-metrics.js'

interface Messages {
  a: number
  b: number
}

/** Entries over fake admission, pacing and requests that record what reached them. */
function rig() {
  const metrics = new LoopMetrics()
  const calls: string[] = []
  const refused: Error[] = []
  const admission = {
    post: (type: string, _payload: unknown, _o: unknown, throws: boolean, from?: { hops: number }) => {
      calls.push(`post ${type} ${throws ? 'throws' : 'result'}${from === undefined ? '' : ` hop ${from.hops}`}`)
      return {}
    },
    refused: (_type: string, error: Error) => {
      refused.push(error)
      metrics.rejected++
    },
    refuseInput: (_type: string, error: Error): never => {
      refused.push(error)
      metrics.rejected++
      throw error
    },
    checkDelay: (_type: string, name: string, value: number) => calls.push(`check ${name} ${value}`),
    schedule: (type: string, _payload: unknown, at: number) => calls.push(`schedule ${type} at ${at}`),
  }
  const parts = {
    clock: { now: () => 1_000 },
    metrics,
    limits: { maxHops: 2, idPrefix: 'loop' },
    admission,
    ways: {
      pacing: { send: async () => calls.push('send') },
      requests: { open: (_r: unknown, post: () => unknown) => (post(), Promise.resolve('done')) },
      jobs: {
        post: (type: string) => calls.push(`job post ${type}`),
        schedule: (type: string, _p: unknown, at: number) => calls.push(`job schedule ${type} at ${at}`),
      },
    },
    restore: {},
  } as unknown as EntryParts<Messages>
  return { entries: new Entries<Messages>(parts), metrics, calls, refused }
}

describe('Entries', () => {
  it('counts every way in once, in posted, before handing it on', async () => {
    const { entries, metrics, calls } = rig()
    entries.post('a', 1, undefined, true)
    entries.post('a', 1, undefined, false)
    await entries.send('a', 1, undefined)
    await entries.request('a', 1, undefined)
    entries.schedule('a', 1, 'delayMs', 500, undefined)
    entries.schedule('a', 1, 'at', 7, undefined)
    entries.replay({ type: 'letter' } as never, false)
    expect(metrics.posted).toBe(7)
    expect(calls).toEqual([
      'post a throws',
      'post a result',
      'send',
      'post a throws',
      'check delayMs 500',
      'schedule a at 1500',
      'check at 7',
      'schedule a at 7',
      'post letter result',
    ])
  })

  it('counts a request refused for its own options as posted and rejected, and rejects with the typed error', async () => {
    const { entries, metrics, refused } = rig()
    const failed = await entries.request('a', 1, { waitTimeoutMs: -1 }).catch((e: unknown) => e)
    expect(failed).toBeInstanceOf(InvalidArgumentError)
    expect((failed as InvalidArgumentError).message).toContain('options.waitTimeoutMs')
    expect([metrics.posted, metrics.rejected, refused.length]).toEqual([1, 1, 1])
  })

  it('counts a follow-up past maxHops as posted and refuses it with HopLimitError', () => {
    const { entries, metrics, calls } = rig()
    const parent = new Envelope('loop', 1, 'a', 1, undefined, 4, 0, { trace: 't', hops: 1, headers: {} })
    entries.postFollowUp(parent, 'b', 2, undefined, 'throw')
    expect(calls).toEqual(['post b throws hop 2'])
    const deep = new Envelope('loop', 2, 'a', 1, undefined, 4, 0, { trace: 't', hops: 2, headers: {} })
    expect(() => entries.postFollowUp(deep, 'b', 2, undefined, 'result')).toThrow(HopLimitError)
    expect([metrics.posted, metrics.rejected]).toEqual([2, 1])
  })

  it('reads the post number of its own ids only', () => {
    const { entries } = rig()
    expect(entries.seqOf('loop:z')).toBe(35)
    expect([entries.seqOf('other:z'), entries.seqOf(42), entries.seqOf('loop:')]).toEqual([
      undefined,
      undefined,
      undefined,
    ])
  })
})
