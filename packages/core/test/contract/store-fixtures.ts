/**
 * What the store contract builds its batches from: records, letters and keys with every field set, a
 * batch builder, the reference model (a `Map` per table, JSON-copied like every store), and the
 * fast-check arbitraries of the differential test. Store-agnostic: types only from core.
 */
import fc from 'fast-check'
import type {
  AttemptRecord,
  DeadLetter,
  JournalBatch,
  JournalRecord,
  JournalState,
  KeyRecord,
  StoreContents,
} from '../../src/index.js'

/** A key expiry long past (every store drops it) and one far ahead (2100): no clock in the tests. */
export const EXPIRED_AT = 1_000
export const FAR_FUTURE = 4_102_444_800_000

/** A failed attempt with a full error description. */
export function attempt(n: number, outcome: AttemptRecord['outcome'] = 'failed'): AttemptRecord {
  return {
    attempt: n,
    startedAt: 1000 * n,
    startedAtEpochMs: 1_700_000_000_000 + 1000 * n,
    durationMs: 12.5,
    outcome,
    ...(outcome === 'succeeded'
      ? {}
      : {
          error: {
            name: 'TypeError',
            message: `boom #${n} "quoted" ünïcödé`,
            code: 'E_BOOM',
            stack: 'TypeError: boom\n    at handler (file.ts:1:1)',
            cause: { name: 'Error', message: 'root cause' },
            signature: 'TypeError: boom #',
            errorClass: 'retryable',
          },
        }),
  }
}

/** A journal record; `overrides` replace fields. */
export function record(id: string, overrides: Partial<JournalRecord> = {}): JournalRecord {
  return {
    id,
    type: 'order.paid',
    payloadJson: JSON.stringify({ orderId: id, amount: 12.5, lines: [1, 2, 3], note: 'é "q" \n' }),
    key: `customer-${id.length}`,
    priority: 4,
    traceId: `trace-${id}`,
    hops: 0,
    state: 'queued',
    attempts: [],
    ...overrides,
  }
}

/** A record with every optional field set. */
export function fullRecord(id: string, state: JournalState = 'retry-scheduled'): JournalRecord {
  return record(id, {
    key: 42,
    priority: 0,
    hops: 3,
    state,
    dueAtEpochMs: 1_700_000_123_456,
    attempts: [attempt(1), attempt(2, 'timed-out')],
    idempotencyKey: `idem-${id}`,
    checkpoint: { step: 'charged', at: [1, 2, { nested: null }], ok: true },
    retry: { maxAttempts: 5, baseMs: 100, factor: 2, capMs: 5_000, jitter: 0.2, jitterStrategy: 'full' },
    handlerTimeoutMs: 2_500,
    job: { key: `payment-timeout:${id}`, untilEpochMs: 1_700_000_200_000 },
    schedule: {
      id: `nightly-${id}`,
      spec: { cron: '30 2 * * *', tz: 'Europe/Berlin', limit: 10, missed: { backfill: 3 } },
      options: { key: 'report', priority: 2, headers: { 'x-tenant': 't-1' } },
      runs: 4,
      nominalEpochMs: 1_700_000_123_456,
    },
  })
}

/** A dead letter. */
export function letter(id: string, at = 1_700_000_000_000): DeadLetter {
  return {
    id,
    type: 'order.paid',
    payload: { orderId: id, amount: 3 },
    key: 'customer-1',
    priority: 2,
    routeKey: undefined,
    traceId: `trace-${id}`,
    reason: 'exhausted',
    errorClass: 'retryable',
    error: { name: 'Error', message: 'gateway down', signature: 'Error: gateway down', errorClass: 'retryable' },
    attempts: [attempt(1), attempt(2)],
    at: 5_000,
    atEpochMs: at,
    idempotencyKey: `idem-${id}`,
    checkpoint: { step: 1 },
  }
}

/** A finished key. */
export function key(name: string, expiresAtEpochMs = FAR_FUTURE, state: 'done' | 'failed' = 'done'): KeyRecord {
  return { key: name, entry: { state, checkpoint: { receipt: `r-${name}` } }, expiresAtEpochMs }
}

/** A batch: every list empty unless given. */
export function batch(parts: Partial<JournalBatch> = {}): JournalBatch {
  return { messages: [], removed: [], deadLetters: [], deadLettersRemoved: [], keys: [], keysRemoved: [], ...parts }
}

/** What every store returns for a value: its JSON copy (undefined fields dropped). */
export function jsonCopy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T
}

/** Keys in a stable order: the contract does not fix the order of keys. */
export function byKey(keys: readonly KeyRecord[]): KeyRecord[] {
  return [...keys].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
}

/** The reference: one `Map` per table; `Map.set` on a present id keeps its place, as a store must. */
export class StoreModel {
  readonly messages = new Map<string, JournalRecord>()
  readonly deadLetters = new Map<string, DeadLetter>()
  readonly keys = new Map<string, KeyRecord>()

  apply(b: JournalBatch): void {
    for (const id of b.removed) this.messages.delete(id)
    for (const id of b.deadLettersRemoved) this.deadLetters.delete(id)
    for (const k of b.keysRemoved) this.keys.delete(k)
    for (const r of b.messages) this.messages.set(r.id, jsonCopy(r))
    for (const l of b.deadLetters) this.deadLetters.set(l.id, jsonCopy(l))
    for (const k of b.keys) this.keys.set(k.key, jsonCopy(k))
  }

  /** What a store must recover (keys sorted, expired ones left out). */
  contents(now = Date.now()): StoreContents {
    return {
      messages: [...this.messages.values()],
      deadLetters: [...this.deadLetters.values()],
      keys: byKey([...this.keys.values()].filter((k) => k.expiresAtEpochMs > now)),
    }
  }
}

/** A store's contents with its keys sorted, to compare with {@link StoreModel.contents}. */
export function normalized(contents: StoreContents): StoreContents {
  return { messages: contents.messages, deadLetters: contents.deadLetters, keys: byKey(contents.keys) }
}

const recordArb = (id: string): fc.Arbitrary<JournalRecord> =>
  fc
    .record(
      {
        payloadJson: fc.json({ maxDepth: 2 }),
        key: fc.oneof(fc.string({ maxLength: 8 }), fc.integer({ min: -1000, max: 1000 })),
        priority: fc.constantFrom(0, 4, 9),
        hops: fc.nat(5),
        state: fc.constantFrom<JournalState>('queued', 'delayed', 'retry-scheduled'),
        dueAtEpochMs: fc.integer({ min: 0, max: 2 ** 42 }),
        attempts: fc.array(fc.constantFrom(attempt(1), attempt(2, 'timed-out')), { maxLength: 2 }),
        checkpoint: fc.jsonValue({ maxDepth: 2 }),
        handlerTimeoutMs: fc.integer({ min: 1, max: 60_000 }),
      },
      { requiredKeys: ['priority', 'hops', 'state', 'attempts'] },
    )
    .map((fields) => record(id, fields as Partial<JournalRecord>))

/** One generated batch over small id pools, so that ids recur: replaced, removed, journaled again. */
export const batchArb: fc.Arbitrary<JournalBatch> = fc
  .record({
    messages: fc.uniqueArray(fc.tuple(fc.nat(15), fc.boolean()), { selector: ([id]) => id, maxLength: 8 }),
    letters: fc.uniqueArray(fc.tuple(fc.nat(5), fc.boolean()), { selector: ([id]) => id, maxLength: 3 }),
    keys: fc.uniqueArray(fc.tuple(fc.nat(5), fc.boolean(), fc.boolean()), { selector: ([id]) => id, maxLength: 3 }),
    seed: fc.array(recordArb('m'), { minLength: 8, maxLength: 8 }),
  })
  .map(({ messages, letters, keys, seed }) =>
    batch({
      messages: messages.filter(([, put]) => put).map(([id], i) => ({ ...(seed[i] as JournalRecord), id: `m${id}` })),
      removed: messages.filter(([, put]) => !put).map(([id]) => `m${id}`),
      deadLetters: letters.filter(([, put]) => put).map(([id]) => letter(`d${id}`)),
      deadLettersRemoved: letters.filter(([, put]) => !put).map(([id]) => `d${id}`),
      keys: keys.filter(([, put]) => put).map(([id, , live]) => key(`k${id}`, live ? FAR_FUTURE : EXPIRED_AT)),
      keysRemoved: keys.filter(([, put]) => !put).map(([id]) => `k${id}`),
    }),
  )
