/**
 * The outcomes stage against fakes of its ports: the real side tables (extras, traces, the ledger), a
 * real emitter and counters, and recording sinks and loop-backs.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { VirtualClock } from '../src/clock.js'
import type { DeadLetter, ErrorInfo } from '../src/contracts/failures.js'
import { Traces } from '../src/failure/trace.js'
import type { Trace } from '../src/failure/trace-record.js'
import { Idempotency, LedgerSlot } from '../src/idempotency/ledger.js'
import type { MemoryIdempotencyStore } from '../src/idempotency/store.js'
import { Envelope, Where } from '../src/internal/envelope.js'
import { LoopEmitter } from '../src/internal/loop-emitter.js'
import { PostExtras } from '../src/internal/post-extras.js'
import { LoopMetrics } from '../src/metrics/loop-metrics.js'
import type { OutcomeParts } from '../src/outcomes/outcome-ports.js'
import { Outcomes } from '../src/outcomes/outcomes.js'
import { catchRethrown } from './fixtures.js'

interface Messages {
  job: number
}

const OUTCOME_COUNTERS = ['succeeded', 'deadLettered', 'requestFailed', 'dropped', 'cancelled', 'snapshotted'] as const
type Counter = (typeof OUTCOME_COUNTERS)[number]

/** The six outcome counters of `metrics`. */
function outcomeCounts(metrics: LoopMetrics): Record<Counter, number> {
  return Object.fromEntries(OUTCOME_COUNTERS.map((c) => [c, metrics[c]])) as Record<Counter, number>
}

/** Only `counter` at 1. */
function onlyOne(counter: Counter): Record<Counter, number> {
  return Object.fromEntries(OUTCOME_COUNTERS.map((c) => [c, c === counter ? 1 : 0])) as Record<Counter, number>
}

interface RigOptions {
  /** Requests waiting (the `size` the outcomes read). */
  readonly waiting?: number
  /** A journal sink, recording what it is told. */
  readonly journal?: boolean
  /** A per-message log; `throws` makes each of its calls throw. */
  readonly log?: 'on' | 'throws'
}

/** Outcomes over real side tables, a real emitter and counters, and sinks and loop-backs that record. */
function rig(o: RigOptions = {}) {
  const clock = new VirtualClock(1_000)
  const events = new LoopEmitter<Messages>()
  const metrics = new LoopMetrics()
  const extras = new PostExtras()
  const traces = new Traces(true, 100)
  const ledger = new LedgerSlot(() => new Idempotency({}, clock, extras, () => {}), true)
  const calls: string[] = []
  const emitted: string[] = []
  for (const name of ['succeeded', 'dropped', 'cancelled', 'idle'] as const)
    events.on(name, (...args: unknown[]) => emitted.push([name, ...args.map(show)].join(' ')))
  const state = { work: false, entries: 0 }
  const requests = {
    size: o.waiting ?? 1,
    succeeded: (m: Envelope, value: unknown) => calls.push(`request ${m.seq} succeeded ${show(value)}`),
    failed: (m: Envelope, outcome: string, detail: string, cause?: unknown) =>
      calls.push(`request ${m.seq} ${outcome}: ${detail}${cause === undefined ? '' : ` (${show(cause)})`}`),
    failedWith: (m: Envelope, error: unknown) => calls.push(`request ${m.seq} rejects with ${show(error)}`),
    takesFailure: () => true,
  }
  const journal = {
    letterOf: (m: Envelope, letter: DeadLetter) => {
      calls.push(`journal letter ${m.seq}`)
      return { ...letter, payload: 'as committed' }
    },
    saved: (m: Envelope, s: string, _entry: unknown, dueAt?: number) =>
      calls.push(`journal saved ${m.seq} ${s} ${dueAt}`),
    touch: (m: Envelope) => calls.push(`journal touch ${m.seq}`),
  }
  const logged: string[] = []
  const write = (level: string) => (line: { id: string; outcome: string }) => {
    if (o.log === 'throws') throw new Error(`log ${level} failed`)
    logged.push(`${level} ${line.id} ${line.outcome}`)
  }
  const parts: OutcomeParts<Messages> = {
    clock,
    events,
    metrics,
    records: { extras, traces, ledger },
    queue: {
      release: (key) => calls.push(`release ${key}`),
      get entries() {
        return state.entries
      },
    },
    sinks: {
      deadLetters: {
        add: (l) => calls.push(`dead letter ${l.id} ${l.reason} idem=${l.idempotencyKey} payload=${l.payload}`),
      },
      handBack: {
        write: (m, s, entry, dueAt) => calls.push(`hand back ${m.seq} ${s} idem=${entry.idempotencyKey} ${dueAt}`),
      },
      requests,
      journal: o.journal === true ? journal : undefined,
      messageLog: o.log === undefined ? undefined : { info: write('info'), warn: write('warn') },
    },
    backs: {
      workLeft: () => state.work,
      succeeded: (m, attempt, startedAt, now) => calls.push(`backs succeeded ${m.seq} #${attempt} ${startedAt}→${now}`),
    },
  }
  const outcomes = new Outcomes<Messages>(parts)
  let seq = 0
  /** An admitted message with ordering key `k` and idempotency key `idem-<seq>`, claimed and traced. */
  const admitted = (): Envelope => {
    const m = new Envelope('t', ++seq, 'job', seq, 'k', 4, clock.now(), undefined)
    state.entries++ // it entered the queue
    extras.keep(m, { idempotencyKey: `idem-${m.seq}` })
    expect(ledger.current?.claim(`idem-${m.seq}`)).toBeUndefined()
    traces.note(m, 'queued', m.postedAt)
    return m
  }
  const store = ledger.current?.store as MemoryIdempotencyStore
  /** The ledger's entry for `m`'s idempotency key, and whether the loop still holds it. */
  const ledgerOf = (m: Envelope) => ({
    entry: store.get(`idem-${m.seq}`)?.state,
    held: ledger.current?.holds(`idem-${m.seq}`),
  })
  return {
    clock,
    events,
    metrics,
    extras,
    traces,
    outcomes,
    calls,
    emitted,
    logged,
    state,
    requests,
    admitted,
    ledgerOf,
  }
}

type Rig = ReturnType<typeof rig>

function show(value: unknown): string {
  if (value instanceof Envelope) return `#${value.seq}`
  if (value instanceof Error) return value.message
  return String(value)
}

const BOOM: ErrorInfo = { name: 'Error', message: 'boom', signature: 'Error: boom', errorClass: 'retryable' }

const letterOf = (m: Envelope, at: number): Omit<DeadLetter, 'idempotencyKey' | 'checkpoint' | 'headers'> => ({
  id: m.id,
  type: m.type,
  payload: m.payload,
  key: m.key,
  priority: m.priority,
  routeKey: undefined,
  traceId: m.traceId,
  reason: 'exhausted',
  errorClass: 'retryable',
  error: BOOM,
  attempts: [],
  at,
  atEpochMs: at,
})

interface Row {
  readonly name: string
  readonly end: (r: Rig, m: Envelope) => void
  readonly counter: Counter
  /** What the sinks, the queue and the loop-backs were told. */
  readonly calls: (seq: number) => string[]
  /** The outcome's own event, if it has one. */
  readonly emitted: (seq: number) => string[]
  /** The ledger afterwards: the entry's state and whether the loop still holds the key. */
  readonly ledger: { entry: string | undefined; held: boolean | undefined }
  /** What a journal is told (by default, only the touch of the ended message's row). */
  readonly journal?: (seq: number) => string[]
  /** The trace's last transition (`undefined`: left to the loop-back). */
  readonly trace: { state: string; detail?: string } | undefined
}

const error = new Error('boom')

const ROWS: Row[] = [
  {
    name: 'succeeded',
    end: (r, m) => r.outcomes.succeeded(m, 5, 1, 1_000, 1_005, 'value'),
    counter: 'succeeded',
    calls: (s) => ['release k', `backs succeeded ${s} #1 1000→1005`, `request ${s} succeeded value`],
    emitted: (s) => [`succeeded #${s} 5`, 'idle'],
    ledger: { entry: 'done', held: false },
    trace: undefined, // the failure side notes it (backs.succeeded)
  },
  {
    name: 'deadLettered',
    end: (r, m) => r.outcomes.deadLettered(m, letterOf(m, 1_000), error),
    counter: 'deadLettered',
    calls: (s) => [
      'release k',
      `dead letter t:${s.toString(36)} exhausted idem=idem-${s} payload=${s}`,
      `request ${s} dead-lettered: exhausted (boom)`,
    ],
    emitted: () => [], // its event is the failure side's
    ledger: { entry: 'failed', held: false },
    journal: (s) => [`journal touch ${s}`, `journal letter ${s}`],
    trace: { state: 'dead-lettered', detail: 'exhausted' },
  },
  {
    name: 'requestFailed',
    end: (r, m) => r.outcomes.requestFailed(m, 'non-retryable', error, 1_000),
    counter: 'requestFailed',
    calls: (s) => ['release k', `request ${s} rejects with boom`],
    emitted: () => [],
    ledger: { entry: 'failed', held: false },
    trace: { state: 'request-failed', detail: 'non-retryable' },
  },
  {
    name: 'dropped (drop-new: its key was never taken)',
    end: (r, m) => r.outcomes.dropped(m, 'drop-new'),
    counter: 'dropped',
    calls: (s) => [`request ${s} dropped: drop-new`],
    emitted: (s) => [`dropped #${s} drop-new`],
    ledger: { entry: undefined, held: false },
    trace: { state: 'dropped' },
  },
  {
    name: 'dropped (drop-oldest-lowest, holding its key)',
    end: (r, m) => r.outcomes.dropped(m, 'drop-oldest-lowest', true),
    counter: 'dropped',
    calls: (s) => ['release k', `request ${s} dropped: drop-oldest-lowest`],
    emitted: (s) => [`dropped #${s} drop-oldest-lowest`],
    ledger: { entry: undefined, held: false },
    trace: { state: 'dropped' },
  },
  {
    name: 'dropped (duplicate: the ledger entry is someone else’s)',
    end: (r, m) => r.outcomes.dropped(m, 'duplicate'),
    counter: 'dropped',
    calls: (s) => [`request ${s} dropped: duplicate`],
    emitted: (s) => [`dropped #${s} duplicate`],
    ledger: { entry: 'processing', held: false },
    trace: { state: 'dropped' },
  },
  {
    name: 'cancelled',
    end: (r, m) => r.outcomes.cancelled(m),
    counter: 'cancelled',
    calls: (s) => [`request ${s} cancelled: cancelled before it ran`],
    emitted: (s) => [`cancelled #${s}`],
    ledger: { entry: undefined, held: false },
    trace: { state: 'cancelled' },
  },
  {
    name: 'snapshotted (queued: its key was not taken)',
    end: (r, m) => r.outcomes.snapshotted(m, 'queued'),
    counter: 'snapshotted',
    calls: (s) => [
      `hand back ${s} queued idem=idem-${s} undefined`,
      `request ${s} snapshotted: handed back by a stop (queued)`,
    ],
    emitted: () => [],
    ledger: { entry: 'processing', held: false }, // stays claimed for the restore
    journal: (s) => [`journal saved ${s} queued undefined`, `journal touch ${s}`], // saved before it ends
    trace: { state: 'snapshotted', detail: 'queued' },
  },
  {
    name: 'snapshotted (retry-scheduled, holding its key)',
    end: (r, m) => r.outcomes.snapshotted(m, 'retry-scheduled', 1_500, true),
    counter: 'snapshotted',
    calls: (s) => [
      'release k',
      `hand back ${s} retry-scheduled idem=idem-${s} 1500`,
      `request ${s} snapshotted: handed back by a stop (retry-scheduled)`,
    ],
    emitted: () => [],
    ledger: { entry: 'processing', held: false },
    journal: (s) => [`journal saved ${s} retry-scheduled 1500`, `journal touch ${s}`],
    trace: { state: 'snapshotted', detail: 'retry-scheduled' },
  },
]

describe('Outcomes (against fakes of its ports)', () => {
  describe.each(ROWS)('$name', (row) => {
    it('counts one outcome, moves the key on (or keeps it), tells its sinks and emits its event', () => {
      const r = rig()
      const m = r.admitted()
      row.end(r, m)
      expect(m.where).toBe(Where.Done)
      expect(outcomeCounts(r.metrics)).toEqual(onlyOne(row.counter))
      expect(r.calls).toEqual(row.calls(m.seq))
      expect(r.emitted).toEqual(row.emitted(m.seq))
      expect(r.ledgerOf(m)).toEqual(row.ledger)
      expect(r.extras.size).toBe(0) // the side table forgot it
      const trace = r.traces.find(m.seq)
      if (row.trace !== undefined) {
        expect(trace?.state).toBe(row.trace.state)
        expect(trace?.transitions.at(-1)).toEqual({ state: row.trace.state, at: 1_000, ...pick(row.trace) })
        expect(r.traces.live).toBe(0) // the final transition retired it
      }
    })

    it('tells no request when none waits', () => {
      const r = rig({ waiting: 0 })
      const m = r.admitted()
      row.end(r, m)
      const toRequests = r.calls.filter((c) => c.startsWith('request '))
      // `request-failed` is only ever reached for a request that takes the failure: it is told regardless.
      expect(toRequests).toEqual(row.counter === 'requestFailed' ? [`request ${m.seq} rejects with boom`] : [])
    })

    it('with a journal: touches its row; a dead letter is kept as committed, a snapshot saved first', () => {
      const r = rig({ journal: true })
      const m = r.admitted()
      row.end(r, m)
      const journal = r.calls.filter((c) => c.startsWith('journal '))
      expect(journal).toEqual(row.journal?.(m.seq) ?? [`journal touch ${m.seq}`])
      const letters = r.calls.filter((c) => c.startsWith('dead letter '))
      expect(letters.map((c) => c.split(' payload=')[1])).toEqual(
        row.counter === 'deadLettered' ? ['as committed'] : [],
      )
    })

    it('logs one line and emits `finished`, when asked; a throwing log is no obstacle', async () => {
      const caught = catchRethrown()
      try {
        for (const log of ['on', 'throws'] as const) {
          const r = rig({ log })
          const finished: string[] = []
          r.events.on('finished', (msg, summary) => finished.push(`${msg.id} ${summary.outcome}`))
          const m = r.admitted()
          const trace = r.traces.find(m.seq) as unknown as Trace
          row.end(r, m)
          // A failure's log line and `finished` follow the failure side's events.
          if (row.counter === 'deadLettered' || row.counter === 'requestFailed')
            r.outcomes.failureAnnounced(
              m,
              row.counter === 'deadLettered' ? 'dead-lettered' : 'request-failed',
              trace,
              1_000,
              'exhausted',
              BOOM,
            )
          const outcome = row.trace?.state ?? 'succeeded'
          expect(finished).toEqual([`${m.id} ${outcome}`])
          const level = outcome === 'dead-lettered' || outcome === 'dropped' ? 'warn' : 'info'
          expect(r.logged).toEqual(log === 'on' ? [`${level} ${m.id} ${outcome}`] : [])
          expect(outcomeCounts(r.metrics)).toEqual(onlyOne(row.counter))
        }
        await Promise.resolve()
        expect(caught.errors.map(show)).toEqual([
          `log ${row.trace?.state === 'dead-lettered' || row.trace?.state === 'dropped' ? 'warn' : 'info'} failed`,
        ])
      } finally {
        caught.restore()
      }
    })
  })

  it('a listener finds the message finished everywhere, and one that throws cuts nothing short', async () => {
    const caught = catchRethrown()
    try {
      const r = rig()
      const seen: unknown[] = []
      const m = r.admitted()
      r.events.on('dropped', () => {
        throw new Error('listener failed')
      })
      r.events.on('dropped', (msg) => {
        const e = msg as unknown as Envelope
        seen.push(e.where === Where.Done, r.metrics.dropped, r.extras.size, r.ledgerOf(e).held, r.traces.live)
      })
      r.outcomes.dropped(m, 'drop-oldest-lowest', true)
      expect(seen).toEqual([true, 1, 0, false, 0])
      expect(r.calls).toEqual(['release k', `request ${m.seq} dropped: drop-oldest-lowest`])

      const n = r.admitted()
      r.events.on('succeeded', () => {
        throw new Error('listener failed')
      })
      let drained = false
      r.state.work = true
      void r.outcomes.drain().then(() => (drained = true))
      r.state.work = false
      r.outcomes.succeeded(n, 1, 1, 1_000, 1_001, undefined)
      await Promise.resolve()
      expect([drained, r.metrics.succeeded, r.extras.size]).toEqual([true, 1, 0])
      expect(r.emitted.at(-1)).toBe('idle') // the idle check ran after the throwing listener
      expect(caught.errors.map(show)).toEqual(['listener failed', 'listener failed'])
    } finally {
      caught.restore()
    }
  })

  describe('idle and drain()', () => {
    it('drain() resolves at once when nothing is left', async () => {
      const r = rig()
      expect(r.outcomes.idle).toBe(true)
      await r.outcomes.drain()
    })

    it('is not idle while work is left or a failure is in transit; idleCheck then does nothing', async () => {
      const r = rig()
      let drained = 0
      r.state.work = true
      void r.outcomes.drain().then(() => drained++)
      r.outcomes.idleCheck()
      await flush()
      expect([r.outcomes.idle, drained, r.emitted]).toEqual([false, 0, []])

      r.state.work = false
      r.outcomes.inTransit()
      r.outcomes.inTransit()
      r.outcomes.idleCheck()
      r.outcomes.landed()
      r.outcomes.idleCheck()
      await flush()
      expect([r.outcomes.idle, drained, r.emitted]).toEqual([false, 0, []])

      r.outcomes.landed()
      expect(r.outcomes.idle).toBe(true)
      r.outcomes.idleCheck()
      await flush()
      expect([drained, r.emitted]).toEqual([1, ['idle']])
    })

    it('resolves every waiter of one idle once, and a later drain() waits for the next idle', async () => {
      const r = rig()
      const resolved: string[] = []
      r.state.work = true
      void r.outcomes.drain().then(() => resolved.push('a'))
      void r.outcomes.drain().then(() => resolved.push('b'))
      r.state.work = false
      r.outcomes.idleCheck()
      r.state.work = true
      void r.outcomes.drain().then(() => resolved.push('c'))
      r.outcomes.idleCheck()
      await flush()
      expect(resolved).toEqual(['a', 'b'])
      r.state.work = false
      r.outcomes.idleCheck()
      await flush()
      expect(resolved).toEqual(['a', 'b', 'c'])
    })

    it('emits idle once per transition: again only after work entered the queue since', () => {
      const r = rig()
      r.outcomes.idleCheck()
      r.outcomes.idleCheck()
      expect(r.emitted).toEqual(['idle'])
      r.state.entries++
      r.outcomes.idleCheck()
      r.outcomes.idleCheck()
      expect(r.emitted).toEqual(['idle', 'idle'])
    })

    it('a success checks for idle; with work left it emits nothing', () => {
      const r = rig()
      r.state.work = true
      const m = r.admitted()
      r.outcomes.succeeded(m, 1, 1, 1_000, 1_001, undefined)
      expect(r.emitted).toEqual([`succeeded #${m.seq} 1`])
    })
  })

  it('property: over distinct messages, the outcome counters sum to the messages ended, each ended once', () => {
    // Outcomes does not guard against a second outcome: its first step marks the message `Done`, and
    // every caller ends only a message it finds where it left it (never `Done`). The driver does the
    // same, including a listener that tries to end the message its event is about once more.
    const kinds = ['succeeded', 'deadLettered', 'requestFailed', 'dropped', 'cancelled', 'snapshotted'] as const
    const op = fc.record({ kind: fc.constantFrom(...kinds), index: fc.nat(9), holdsKey: fc.boolean() })
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10 }), fc.array(op, { maxLength: 40 }), fc.boolean(), (n, ops, reenter) => {
        const r = rig()
        const messages = Array.from({ length: n }, () => r.admitted())
        const ended = new Map<number, number>()
        let released = 0
        const end = (m: Envelope, kind: (typeof kinds)[number], holdsKey: boolean) => {
          if (m.where === Where.Done) return // as every caller does
          ended.set(m.seq, (ended.get(m.seq) ?? 0) + 1)
          const holds =
            kind === 'succeeded' ||
            kind === 'deadLettered' ||
            kind === 'requestFailed' ||
            (holdsKey && kind !== 'cancelled')
          if (holds) released++
          const o = r.outcomes
          if (kind === 'succeeded') o.succeeded(m, 1, 1, 1_000, 1_000, undefined)
          else if (kind === 'deadLettered') o.deadLettered(m, letterOf(m, 1_000), error)
          else if (kind === 'requestFailed') o.requestFailed(m, 'exhausted', error, 1_000)
          else if (kind === 'dropped') o.dropped(m, 'drop-new', holdsKey)
          else if (kind === 'cancelled') o.cancelled(m)
          else o.snapshotted(m, 'queued', undefined, holdsKey)
        }
        if (reenter)
          for (const name of ['succeeded', 'dropped', 'cancelled'] as const)
            r.events.on(name, (...args: unknown[]) => end(args[0] as Envelope, 'cancelled', false))
        for (const { kind, index, holdsKey } of ops) {
          const m = messages[index % n] as Envelope
          end(m, kind, holdsKey)
        }
        const counts = outcomeCounts(r.metrics)
        const sum = OUTCOME_COUNTERS.reduce((total, c) => total + counts[c], 0)
        expect(sum).toBe(ended.size)
        expect([...ended.values()].every((times) => times === 1)).toBe(true)
        expect(messages.filter((m) => m.where === Where.Done).length).toBe(ended.size)
        expect(r.calls.filter((c) => c === 'release k').length).toBe(released)
        expect(r.extras.size).toBe(n - ended.size)
      }),
      { seed: 20_260_101, numRuns: 300 },
    )
  })
})

function pick(t: { detail?: string }): { detail?: string } {
  return t.detail === undefined ? {} : { detail: t.detail }
}

async function flush(): Promise<void> {
  for (let i = 0; i < 3; i++) await Promise.resolve()
}
