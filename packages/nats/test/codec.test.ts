/**
 * The wire format: what `encode` puts in a NATS message's headers and body, `decode` gives back —
 * for any message (property), with the headers at their defaults left out.
 */
import { NO_HEADERS, VirtualClock } from '@flowing/core'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { decode, encode, H, type Wire } from '../src/internal/codec.js'

const text = fc
  .string({ minLength: 1, maxLength: 12 })
  .filter((s) => s.trim() === s && !s.includes('\n') && !s.includes('\r'))
const headerName = fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,10}$/)
const wire: fc.Arbitrary<Wire> = fc.record({
  id: fc.stringMatching(/^[a-z0-9]{1,16}$/),
  type: fc.stringMatching(/^[a-z][a-z.]{0,15}$/),
  payload: fc.option(fc.jsonValue(), { nil: undefined }),
  key: fc.option(fc.oneof(text, fc.integer()), { nil: undefined }),
  priority: fc.integer({ min: 0, max: 9 }) as fc.Arbitrary<Wire['priority']>,
  traceId: fc.stringMatching(/^[a-z0-9]{1,16}$/),
  hops: fc.nat(50),
  idempotencyKey: fc.option(text, { nil: undefined }),
  retry: fc.option(fc.record({ maxAttempts: fc.integer({ min: 1, max: 9 }) }), { nil: undefined }),
  handlerTimeoutMs: fc.option(fc.integer({ min: 1, max: 60_000 }), { nil: undefined }),
  headers: fc.dictionary(headerName, fc.oneof(fc.constant(''), text), { maxKeys: 3 }),
  postedAtEpochMs: fc.integer({ min: 0, max: 2 ** 42 }),
  dueAtEpochMs: fc.option(fc.integer({ min: 0, max: 2 ** 42 }), { nil: undefined }),
})

describe('encode() / decode()', () => {
  it('gives back every message it encodes (property)', () => {
    const clock = new VirtualClock()
    fc.assert(
      fc.property(wire, fc.boolean(), (w, ownTrace) => {
        const sent = ownTrace ? { ...w, traceId: w.id } : w
        const { headers, body } = encode(sent)
        const got = decode(headers, body, clock)
        const headersOf = Object.keys(sent.headers).length === 0 ? NO_HEADERS : sent.headers
        // The payload as JSON gives it back (a -0 comes back as 0).
        const payload = sent.payload === undefined ? undefined : JSON.parse(JSON.stringify(sent.payload))
        expect(got).toEqual({ ...sent, headers: headersOf, payload })
      }),
      { numRuns: 300 },
    )
  })

  it('leaves out priority 5, a trace that is the message itself and zero hops', () => {
    const { headers, body } = encode(base)
    expect([...(headers as unknown as Iterable<[string]>)].map(([name]) => name)).toEqual([H.id, H.type, H.postedAt])
    expect(decode(headers, body, new VirtualClock())).toMatchObject({ priority: 5, traceId: 'm1', hops: 0 })
  })
})

const base: Wire = {
  id: 'm1',
  type: 'job',
  payload: 1,
  key: undefined,
  priority: 5,
  traceId: 'm1',
  hops: 0,
  idempotencyKey: undefined,
  retry: undefined,
  handlerTimeoutMs: undefined,
  headers: NO_HEADERS,
  postedAtEpochMs: 1,
  dueAtEpochMs: undefined,
}
