import { describe, expect, it } from 'vitest'
import { createLoop, FlowingError, InvalidArgumentError, VirtualClock } from '../src/index.js'

interface Messages {
  job: { n: number }
}

class TooBigError extends FlowingError {
  constructor() {
    super('ERR_TEST_TOO_BIG', 'too big')
  }
}

function loopWith(checkPayload: (payload: Messages['job']) => void, asHandlerProperty = false) {
  const loop = createLoop<Messages>({ clock: new VirtualClock(), logger: false })
  const ran: number[] = []
  const handler = (m: { payload: Messages['job'] }) => {
    ran.push(m.payload.n)
  }
  if (asHandlerProperty) loop.on('job', Object.assign(handler, { checkPayload }))
  else loop.on('job', handler, { checkPayload })
  return { loop, ran }
}

describe('a type’s checkPayload', () => {
  it('refuses a post whose payload it throws for, at post, typed and counted; accepts the rest', async () => {
    const { loop, ran } = loopWith((p) => {
      if (p.n > 10) throw new TooBigError()
    })
    loop.post('job', { n: 1 })
    expect(() => loop.post('job', { n: 11 })).toThrow(TooBigError) // a Flowing error passes as it is
    expect(() => loop.postDelayed('job', { n: 12 }, 1_000)).toThrow(TooBigError)
    expect(() => loop.tryPost('job', { n: 13 })).toThrow(TooBigError)
    await loop.drain()
    expect(ran).toEqual([1])
    const { posted, accepted, rejected } = loop.metrics().counters
    expect([posted, accepted, rejected]).toEqual([4, 1, 3])
    await loop.stop()
  })

  it('wraps anything else it throws in InvalidArgumentError of payload, with it as the cause', () => {
    const thrown = new RangeError('n out of range')
    const { loop } = loopWith(() => {
      throw thrown
    })
    let error: unknown
    try {
      loop.post('job', { n: 1 })
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(InvalidArgumentError)
    expect((error as InvalidArgumentError).message).toMatch(/`payload`.*checkPayload.*`job`/)
    expect((error as Error).cause).toBe(thrown)
  })

  it('is taken from the handler itself when the options give none (as threaded handlers carry one)', () => {
    const { loop } = loopWith(() => {
      throw new TooBigError()
    }, true)
    expect(() => loop.post('job', { n: 1 })).toThrow(TooBigError)
  })

  it('must be a function', () => {
    const loop = createLoop<Messages>({ logger: false })
    expect(() => loop.on('job', () => {}, { checkPayload: 'yes' as never })).toThrow(/options\.checkPayload/)
    expect(() =>
      loop.on(
        'job',
        Object.assign(() => {}, { checkPayload: 1 }),
      ),
    ).toThrow(/handler\.checkPayload/)
  })
})
