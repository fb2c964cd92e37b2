/**
 * The wire format: what `encode` puts in a NATS message's body, `decode` gives back — for any message
 * (property), with the fields at their defaults left out; a hostile body is refused as `Undecodable`,
 * and a message an earlier version stored in headers is still read.
 */
import { NO_HEADERS, VirtualClock } from '@flowing/core'
import { headers as natsHeaders } from '@nats-io/transport-node'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { decode, encode, Undecodable, WIRE_MARK, type Wire } from '../src/internal/codec.js'

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
  handlerTimeoutMs: fc.option(fc.oneof(fc.integer({ min: 1, max: 60_000 }), fc.constant(Number.POSITIVE_INFINITY)), {
    nil: undefined,
  }),
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
        const got = decode({ data: encode(sent) }, clock)
        const headersOf = Object.keys(sent.headers).length === 0 ? NO_HEADERS : sent.headers
        // The payload as JSON gives it back (a -0 comes back as 0).
        const payload = sent.payload === undefined ? undefined : JSON.parse(JSON.stringify(sent.payload))
        expect(got).toEqual({ ...sent, headers: headersOf, payload })
      }),
      { numRuns: 300 },
    )
  })

  it('leaves out priority 5, a trace that is the message itself, zero hops and no headers', () => {
    const body = encode(base)
    expect(new TextDecoder().decode(body)).toBe(
      `{"${WIRE_MARK}":1,"id":"m1","type":"job","postedAtEpochMs":1,"payload":1}`,
    )
    expect(decode({ data: body }, new VirtualClock())).toMatchObject({ priority: 5, traceId: 'm1', hops: 0 })
  })

  it('refuses a hostile envelope with Undecodable, never another error (property)', () => {
    const field = fc.constantFrom('id', 'type', 'key', 'priority', 'traceId', 'hops', 'idempotencyKey', 'retry')
    const more = fc.constantFrom('handlerTimeoutMs', 'headers', 'postedAtEpochMs', 'dueAtEpochMs')
    const bad = fc.oneof(fc.constant(null), fc.boolean(), fc.constant(''), fc.double(), fc.array(fc.nat()), fc.object())
    fc.assert(
      fc.property(fc.oneof(field, more), bad, (name, value) => {
        const envelope = { [WIRE_MARK]: 1, id: 'm1', type: 'job', postedAtEpochMs: 1, [name]: value }
        const data = new TextEncoder().encode(JSON.stringify(envelope))
        try {
          decode({ data }, new VirtualClock())
        } catch (error) {
          expect(error).toBeInstanceOf(Undecodable)
        }
      }),
      { numRuns: 500 },
    )
    const text = (s: string) => ({ data: new TextEncoder().encode(s) })
    expect(() => decode(text(`{"${WIRE_MARK}":1,"id":"m1","type":""}`), new VirtualClock())).toThrow(
      /type is not a non-empty string/,
    )
    expect(() => decode(text(`{"${WIRE_MARK}":1,`), new VirtualClock())).toThrow(/the body is not JSON/)
    expect(() => decode(text('not json, no headers'), new VirtualClock())).toThrow(Undecodable)
    expect(() => decode(text(`{"${WIRE_MARK}":1,"id":"m1","type":"job","priority":2.5}`), new VirtualClock())).toThrow(
      /priority is not an integer/,
    )
  })

  it("reads a message an earlier version stored: its fields in headers, the payload's JSON in the body", () => {
    const h = natsHeaders()
    h.append('Flowing-Id', 'old-1')
    h.append('Flowing-Type', 'job')
    h.append('Flowing-Key', '"k1"')
    h.append('Flowing-Priority', '2')
    h.append('Flowing-Posted-At', '1700000000000')
    h.append('Flowing-Due', '1700000060000')
    h.append('Flowing-H-tenant', 'acme')
    const got = decode({ headers: h, data: new TextEncoder().encode('{"n":1}') }, new VirtualClock())
    expect(got).toEqual({
      ...base,
      id: 'old-1',
      traceId: 'old-1',
      key: 'k1',
      priority: 2,
      payload: { n: 1 },
      headers: { tenant: 'acme' },
      postedAtEpochMs: 1_700_000_000_000,
      dueAtEpochMs: 1_700_000_060_000,
    })
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
