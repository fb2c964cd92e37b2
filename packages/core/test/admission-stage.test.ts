/**
 * The admission stage against fakes of its gates and places: the real queue, registry, options, side
 * tables, emitter and counters; a lifecycle, breakers, pressure, journal and the places that record.
 */
import { type Decision, Decisions } from '@flowing/backpressure'
import { describe, expect, it } from 'vitest'
import { Admission } from '../src/admission/admission.js'
import type { LoopPressure } from '../src/admission/pressure.js'
import { VirtualClock } from '../src/clock.js'
import type { OverflowPolicy, PostOptions, PostRefused } from '../src/contracts/message.js'
import { Registry } from '../src/dispatcher/registry.js'
import {
  BackpressureError,
  DuplicateMessageError,
  LoopStoppedError,
  LoopStoppingError,
  QueueFullError,
  StoreError,
  TimeoutBreakerOpenError,
} from '../src/errors.js'
import { Traces } from '../src/failure/trace.js'
import { Idempotency, LedgerSlot } from '../src/idempotency/ledger.js'
import { Envelope, Where } from '../src/internal/envelope.js'
import { LoopEmitter } from '../src/internal/loop-emitter.js'
import { PostExtras } from '../src/internal/post-extras.js'
import { LoopMetrics } from '../src/metrics/loop-metrics.js'
import { resolveOptions } from '../src/options/resolve.js'
import { LevelQueue } from '../src/queue/level-queue.js'
import { RunQueue } from '../src/queue/run-queue.js'
import { Urgency } from '../src/queue/urgency.js'
import { thrown } from './fixtures.js'

interface Messages {
  job: number
}

/** What the gates answer; each left at its default admits. */
interface GateSettings {
  stopped?: 'draining' | 'stopped'
  /** Whether follow-ups still get in (as while a stop drains); by default, as roots do. */
  followUps?: boolean
  breakerOpenFor?: number
  pressure?: Decision
  journalRefusal?: StoreError
}

/** Admission over real leaves, fake gates and places that record what reached them. */
function rig(o: { capacity?: number; overflow?: OverflowPolicy; request?: string } = {}) {
  const clock = new VirtualClock(1_000)
  const options = resolveOptions({ clock, capacity: o.capacity ?? 2, overflow: o.overflow ?? 'reject', logger: false })
  const registry = new Registry<Messages>()
  registry.on('job', () => {})
  const urgency = new Urgency(options.agingMs)
  const queue = new RunQueue(new LevelQueue(urgency), urgency)
  const events = new LoopEmitter<Messages>()
  const metrics = new LoopMetrics()
  const extras = new PostExtras()
  const traces = new Traces(true, 100)
  const ledger = new LedgerSlot(() => new Idempotency({}, clock, extras, () => {}), false)
  const gates: GateSettings = {}
  /** The gates consulted, in order. */
  const consulted: string[] = []
  /** What reached the places, the journal and the pressure gauge once past the gates. */
  const placed: string[] = []
  const rejected: string[] = []
  events.on('rejected', (type, error) => rejected.push(`${type} ${error.name}`))
  const lifecycle = {
    get state() {
      return gates.stopped ?? 'running'
    },
    get admitsRoots() {
      consulted.push('lifecycle')
      return gates.stopped === undefined
    },
    get admitsFollowUps() {
      consulted.push('lifecycle follow-ups')
      return gates.followUps ?? gates.stopped === undefined
    },
  }
  const pressureState = { level: 'shed', cause: 'shed', fill: 0.85, retryAfterMs: 40, shedAbove: 2 } as const
  const pressure = {
    decide: (queued: number, priority: number) => {
      consulted.push(`pressure ${queued} ${priority}`)
      return gates.pressure ?? Decisions.admit
    },
    refusal: (type: string, priority: number, decision: Decision) => () =>
      new BackpressureError(type, priority, {
        ...pressureState,
        ...(decision.outcome === 'reject' ? { level: 'reject', cause: 'reject' } : {}),
      }),
    update: (queued: number) => placed.push(`pressure update ${queued}`),
  } as unknown as LoopPressure
  const journal = {
    get refusal() {
      consulted.push('journal')
      return gates.journalRefusal
    },
    admitted: (m: Envelope, json: string | undefined) => placed.push(`journal admitted ${m.seq} ${json}`),
    touch: (m: Envelope) => placed.push(`journal touch ${m.seq}`),
  }
  const load = () => ({ queued: queue.length, capacity: options.capacity, running: 0, waitingProducers: 0 })
  const admission = new Admission<Messages>({
    policy: { options, registry },
    clock,
    events,
    metrics,
    records: { extras, traces, ledger },
    gates: {
      lifecycle,
      breakers: {
        refuses: () => {
          consulted.push('breakers')
          return gates.breakerOpenFor
        },
      },
      pressure,
      journal,
      load,
    },
    places: {
      queue,
      delayed: { length: 0, schedule: () => placed.push('delayed schedule') as never },
      outcomes: { dropped: (m, reason) => placed.push(`dropped ${m.seq} ${reason}`) },
      requests: {
        take: () => o.request,
        bind: (m, request) => placed.push(`bind ${m.seq} ${request}`),
        cancelling: (m, cause) => placed.push(`cancelling ${m.seq} ${cause}`),
      },
      cancel: (m, why, reason) => placed.push(`cancel ${m.seq}: ${why} (${reason})`),
      schedulePump: () => placed.push('pump'),
    },
  })
  const post = (options?: PostOptions, payload = 1) =>
    admission.post('job', payload, options, true) as unknown as Envelope
  const tryPost = (options?: PostOptions, payload = 1) => admission.post('job', payload, options, false)
  return {
    admission,
    events,
    gates,
    consulted,
    placed,
    rejected,
    metrics,
    extras,
    ledger,
    queue,
    traces,
    post,
    tryPost,
  }
}

type Rig = ReturnType<typeof rig>

interface GateRow {
  readonly gate: string
  readonly refuse: (g: GateSettings) => void
  /** The gates consulted up to the one that refused (a default (priority 5) post into an empty queue). */
  readonly consulted: string[]
  readonly error: new (...args: never[]) => Error
  readonly message: string
  /** `tryPost`'s status; `undefined`: `tryPost` throws as `post` does. */
  readonly status: string | undefined
}

const storeDown = new StoreError('memory:test', 'commit', 'the disk is full')

const GATES: GateRow[] = [
  {
    gate: 'the lifecycle (draining)',
    refuse: (g) => (g.stopped = 'draining'),
    consulted: ['lifecycle'],
    error: LoopStoppingError,
    message: 'Cannot post `job`: the loop is stopping',
    status: 'stopped',
  },
  {
    gate: 'the lifecycle (stopped)',
    refuse: (g) => (g.stopped = 'stopped'),
    consulted: ['lifecycle'],
    error: LoopStoppedError,
    message: 'Cannot post `job`: the loop is stopped',
    status: 'stopped',
  },
  {
    gate: 'an open timeout breaker',
    refuse: (g) => (g.breakerOpenFor = 250),
    consulted: ['lifecycle', 'breakers'],
    error: TimeoutBreakerOpenError,
    message:
      "Cannot post `job`: its handlers kept timing out, the type's breaker is open; a probe is allowed in ~250 ms",
    status: undefined, // thrown by tryPost too (the guides: "its posts throw")
  },
  {
    gate: 'pressure (shed)',
    refuse: (g) => (g.pressure = Decisions.shed),
    consulted: ['lifecycle', 'breakers', 'pressure 0 5'],
    error: BackpressureError,
    message:
      'Backpressure refused `job`: priority 5 is above shedAbove = 2 at level shed (queue 85 % full); retry in ~40 ms',
    status: 'shed',
  },
  {
    gate: 'pressure (reject)',
    refuse: (g) => (g.pressure = Decisions.reject),
    consulted: ['lifecycle', 'breakers', 'pressure 0 5'],
    error: BackpressureError,
    message: 'Backpressure refused `job`: level reject refuses every post (queue 85 % full); retry in ~40 ms',
    status: 'reject',
  },
  {
    gate: 'a journal that cannot commit',
    refuse: (g) => (g.journalRefusal = storeDown),
    consulted: ['lifecycle', 'breakers', 'pressure 0 5', 'journal'],
    error: StoreError,
    message: 'Journal store memory:test failed to commit: the disk is full',
    status: 'not-durable',
  },
]

/** Refuses with the gate of `GATES[index]` and every gate after it: the first must win. */
function refuseFrom(r: Rig, index: number): void {
  for (const row of GATES.slice(index).reverse()) row.refuse(r.gates) // `GATES[index]`'s own setting last
}

/** Nothing admitted: no place port reached, the queue and the side tables empty, no key claimed. */
function expectNothingAdmitted(r: Rig): void {
  expect(r.placed).toEqual([])
  expect([r.queue.length, r.extras.size, r.traces.live, r.metrics.accepted]).toEqual([0, 0, 0, 0])
  expect(r.ledger.current?.holds('idem') ?? false).toBe(false)
}

describe('Admission (against fakes of its gates and places)', () => {
  describe.each(GATES.map((row, index) => ({ ...row, index })))('a post refused by $gate', (row) => {
    it('throws the typed error, counts one rejection, and admits nothing', () => {
      const r = rig({ request: 'req' })
      refuseFrom(r, row.index)
      const error = thrown(() => r.post({ idempotencyKey: 'idem', key: 'k' }))
      expect(error).toBeInstanceOf(row.error)
      expect(error.message).toBe(row.message)
      expect(r.consulted).toEqual(row.consulted) // in order, none after the one that refused
      expect([r.metrics.rejected, r.rejected]).toEqual([1, [`job ${error.name}`]])
      expectNothingAdmitted(r)
    })

    it('answers tryPost with its status (the error built when read), or throws where post does', () => {
      const r = rig()
      refuseFrom(r, row.index)
      if (row.status === undefined) {
        expect(thrown(() => r.tryPost())).toBeInstanceOf(row.error)
      } else {
        const result = r.tryPost() as PostRefused
        expect([result.ok, result.status]).toEqual([false, row.status])
        expect(result.error).toBeInstanceOf(row.error)
        expect(result.error.message).toBe(row.message)
      }
      expect([r.metrics.rejected, r.rejected.length]).toEqual([1, 1])
      expectNothingAdmitted(r)
    })
  })

  it('asks pressure with the queue’s length now and the post’s own priority, and refuses with them', () => {
    const r = rig({ capacity: 10 })
    r.post()
    r.post({ priority: 7 })
    r.gates.pressure = Decisions.shed
    const error = thrown(() => r.post({ priority: 8 }))
    expect(r.consulted.filter((c) => c.startsWith('pressure'))).toEqual([
      'pressure 0 5',
      'pressure 1 7',
      'pressure 2 8',
    ])
    expect(error.message).toContain('priority 8 is above shedAbove = 2')
  })

  it('asks the lifecycle about a follow-up’s own rule: admitted while roots are refused, or refused alike', () => {
    const r = rig()
    r.gates.stopped = 'draining'
    r.gates.followUps = true
    const parent = { trace: 'root', hops: 1, headers: {} }
    const m = r.admission.post('job', 1, undefined, true, parent) as unknown as Envelope
    expect([m.hops, m.where, r.metrics.accepted]).toEqual([1, Where.Ready, 1]) // (the ways in count the hop)
    expect(thrown(() => r.post())).toBeInstanceOf(LoopStoppingError)
    r.gates.followUps = false
    const error = thrown(() => r.admission.post('job', 1, undefined, true, parent))
    expect(error).toBeInstanceOf(LoopStoppingError)
    expect(error.message).toBe('Cannot post `job`: the loop is stopping')
    expect(r.consulted.filter((c) => c.startsWith('lifecycle'))).toEqual([
      'lifecycle follow-ups',
      'lifecycle',
      'lifecycle follow-ups',
    ])
    expect([r.metrics.accepted, r.metrics.rejected]).toEqual([1, 2])
  })

  it('admits a post: queued, traced, journaled, bound to its request, pressure fed and a pump scheduled', () => {
    const r = rig({ request: 'req' })
    const m = r.post({ key: 'k', idempotencyKey: 'idem' }, 7)
    expect(m).toBeInstanceOf(Envelope)
    expect([m.type, m.payload, m.key, m.priority, m.where]).toEqual(['job', 7, 'k', 5, Where.Ready])
    expect(r.placed).toEqual([
      `bind ${m.seq} req`,
      `journal touch ${m.seq}`,
      'pressure update 1',
      'pump',
      `journal admitted ${m.seq} 7`,
    ])
    expect(r.consulted).toEqual(['lifecycle', 'breakers', 'pressure 0 5', 'journal'])
    expect([r.queue.length, r.metrics.accepted, r.metrics.rejected]).toEqual([1, 1, 0])
    expect(r.traces.find(m.seq)?.transitions).toEqual([{ state: 'queued', at: 1_000 }])
    expect(r.ledger.current?.holds('idem')).toBe(true)
    expect(r.queue.take()).toBe(m)
  })

  it('answers tryPost with the queued message', () => {
    const r = rig()
    const result = r.tryPost()
    expect(result).toMatchObject({ ok: true, status: 'queued' })
    expect(r.queue.take()).toBe((result as { message: unknown }).message)
  })

  describe('with the queue full', () => {
    /** A rig of capacity 2 filled with two priority-5 posts. */
    function full(overflow: OverflowPolicy) {
      const r = rig({ overflow })
      const first = r.post({ priority: 5 })
      const second = r.post({ priority: 5 })
      r.placed.length = 0
      return { r, first, second }
    }

    it('drop-new: the newcomer is accepted and dropped at once', () => {
      const { r, first } = full('drop-new')
      const m = r.post({ priority: 1 })
      expect(r.placed).toEqual([`dropped ${m.seq} drop-new`, `journal admitted ${m.seq} 1`])
      expect([r.metrics.accepted, r.metrics.rejected, r.queue.length]).toEqual([3, 0, 2])
      expect(r.tryPost()).toMatchObject({ ok: false, status: 'dropped' })
      expect(r.queue.take()).toBe(first)
    })

    it('drop-oldest-lowest: the oldest of the least urgent level is evicted through the queue', () => {
      const { r, first, second } = full('drop-oldest-lowest')
      const m = r.post({ priority: 1 })
      expect(first.where).toBe(Where.HandedOver) // taken out by queue.evictLowest, its outcome next
      expect(r.placed).toEqual([
        `journal touch ${m.seq}`,
        'pressure update 2', // the victim out and the newcomer in, before the victim's outcome
        'pump',
        `dropped ${first.seq} drop-oldest-lowest`,
        `journal admitted ${m.seq} 1`,
      ])
      expect([r.metrics.accepted, r.metrics.rejected]).toEqual([3, 0])
      expect([r.queue.take(), r.queue.take(), r.queue.take()]).toEqual([m, second, undefined])
    })

    it('drop-oldest-lowest: a newcomer less urgent than everything queued is dropped itself', () => {
      const { r, first } = full('drop-oldest-lowest')
      const m = r.post({ priority: 9 })
      expect(r.placed).toEqual([`dropped ${m.seq} drop-new`, `journal admitted ${m.seq} 1`])
      expect(first.where).toBe(Where.Ready)
    })

    it.each(['reject', 'wait'] as const)('%s: answers full, counts one rejection, and unclaims the key', (overflow) => {
      const { r } = full(overflow)
      const error = thrown(() => r.post({ idempotencyKey: 'idem' }))
      expect(error).toBeInstanceOf(QueueFullError)
      expect(error.message).toBe('Queue is full: cannot admit `job` (2/2 queued, 0 running, 0 producers waiting)')
      expect(r.tryPost({ idempotencyKey: 'idem' })).toMatchObject({ ok: false, status: 'full' })
      expect([r.metrics.accepted, r.metrics.rejected, r.metrics.duplicates]).toEqual([2, 2, 0]) // never a duplicate
      expect(r.placed).toEqual([])
      expect([r.ledger.current?.holds('idem'), r.extras.size]).toEqual([false, 0])
      r.queue.take()
      expect(r.post({ idempotencyKey: 'idem' }).where).toBe(Where.Ready) // the key was free
    })
  })

  describe("a post's signal", () => {
    it('already aborted: the request is told, then the message is cancelled', () => {
      const r = rig()
      const controller = new AbortController()
      controller.abort('gone')
      const m = r.post({ signal: controller.signal })
      expect(r.placed.slice(-2)).toEqual([`cancelling ${m.seq} gone`, `cancel ${m.seq}: its signal was aborted (gone)`])
    })

    it('aborted later: the same, when it aborts', () => {
      const r = rig()
      const controller = new AbortController()
      const m = r.post({ signal: controller.signal })
      const before = r.placed.length
      controller.abort('later')
      expect(r.placed.slice(before)).toEqual([
        `cancelling ${m.seq} later`,
        `cancel ${m.seq}: its signal was aborted (later)`,
      ])
    })

    it('is not watched for a post that was not queued', () => {
      const r = rig({ capacity: 1, overflow: 'drop-new' })
      r.post()
      const controller = new AbortController()
      controller.abort('gone')
      const m = r.post({ signal: controller.signal })
      expect(r.placed.filter((c) => c.startsWith('cancel'))).toEqual([])
      expect(m.where).toBe(Where.Ready) // the fake outcomes leave `where` alone
    })
  })

  it('refuses a duplicate idempotency key with DuplicateMessageError, counted and admitting nothing', () => {
    const r = rig()
    const duplicates: string[] = []
    const first = r.post({ idempotencyKey: 'idem' })
    r.placed.length = 0
    r.events.on('duplicate', (type, key, state) => duplicates.push(`${type} ${key} ${state}`))
    const error = thrown(() => r.post({ idempotencyKey: 'idem' }))
    expect(error).toBeInstanceOf(DuplicateMessageError)
    expect(error.message).toBe('Duplicate `job`: idempotency key "idem" is processing; nothing was admitted')
    expect(r.tryPost({ idempotencyKey: 'idem' })).toMatchObject({ ok: false, status: 'duplicate' })
    expect(duplicates).toEqual(['job idem processing', 'job idem processing'])
    expect([r.metrics.accepted, r.metrics.rejected, r.metrics.duplicates]).toEqual([1, 2, 2])
    expect(r.placed).toEqual([])
    expect([r.queue.length, r.extras.size]).toEqual([1, 1]) // only the first one's entry
    expect(r.queue.take()).toBe(first)
  })
})
