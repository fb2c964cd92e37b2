/**
 * What a refused `tryPost` costs: a loop held in a refusing state (queue full, backpressure shedding,
 * an idempotency key in flight), then a tight loop of `tryPost` calls that must all be refused with the
 * expected status. Median ns per call over interleaved runs, and a probe pass that counts the errors
 * built on the result path (there should be none until `error` is read).
 *
 * @module
 */
import {
  BackpressureError,
  createLoop,
  DuplicateMessageError,
  type Loop,
  type PostOptions,
  type PostResult,
  QueueFullError,
} from '@flowing/core'
import { BenchError, expectEqual, withDeadline } from './check.js'
import { countFlowingErrors } from './error-probe.js'
import type { BenchMessages } from './flowing.js'
import { collect } from './gc.js'
import { median } from './stats.js'

type Result = PostResult<BenchMessages, 'tick'>

/** A loop in a refusing state and its refusing call. */
interface Refuser {
  readonly loop: Loop<BenchMessages>
  /** Messages admitted to reach the state (they run once the loop starts). */
  readonly admitted: number
  /** Makes `count` calls; returns the last result and how many results had another status. */
  refuse(count: number): { last: Result | undefined; other: number }
}

/** One kind of refusal. */
export interface RefusalKind {
  /** Stable case id (`--only`). */
  readonly id: string
  /** Row label. */
  readonly label: string
  /** How the refusing state is reached, for the table. */
  readonly setup: string
  /** The status every call must return. */
  readonly status: 'full' | 'shed' | 'duplicate'
  /** The class of the error `error` builds. */
  readonly error: abstract new (
    ...args: never[]
  ) => Error
  /** Builds the loop in its refusing state. */
  prepare(): Refuser
  /** Checks the kind's own counters after `calls` refusals. */
  verify(loop: Loop<BenchMessages>, calls: number): void
}

const LOW = { priority: 9 } as const
const URGENT = { priority: 0 } as const
const DUPLICATE = { idempotencyKey: 'order-1' } as const

/** A refuser whose call is `tryPost('tick', i, options)`, expecting `status` each time. */
function refuser(loop: Loop<BenchMessages>, admitted: number, status: string, options?: PostOptions): Refuser {
  return {
    loop,
    admitted,
    refuse(count) {
      let last: Result | undefined
      let other = 0
      for (let i = 0; i < count; i++) {
        last = loop.tryPost('tick', i, options)
        if (last.status !== status) other++
      }
      return { last, other }
    },
  }
}

function pausedLoop(options: Parameters<typeof createLoop>[0]): Loop<BenchMessages> {
  const loop = createLoop<BenchMessages>({ ...options, autoStart: false })
  loop.on('tick', async () => {})
  return loop
}

/** The three refusals of the issue: full, shed, duplicate. */
export const REFUSAL_KINDS: readonly RefusalKind[] = [
  {
    id: 'refused-full',
    label: 'queue full',
    setup: "`capacity: 64`, `overflow: 'reject'`, loop not started, 64 queued; `tryPost('tick', i)`",
    status: 'full',
    error: QueueFullError,
    prepare() {
      const loop = pausedLoop({ capacity: 64, overflow: 'reject' })
      for (let i = 0; i < 64; i++) loop.post('tick', i)
      return refuser(loop, 64, 'full')
    },
    verify() {},
  },
  {
    id: 'refused-shed',
    label: 'shed by backpressure',
    setup: '`capacity: 100`, `backpressure: true`, 85 queued at priority 0 (level shed); `tryPost` at priority 9',
    status: 'shed',
    error: BackpressureError,
    prepare() {
      const loop = pausedLoop({ capacity: 100, backpressure: true })
      for (let i = 0; i < 85; i++) loop.post('tick', i, URGENT)
      expectEqual('refused-shed: pressure level after 85 of 100', loop.metrics().gauges.pressure, 'shed')
      return refuser(loop, 85, 'shed', LOW)
    },
    verify(loop, calls) {
      const shed = loop.metrics().backpressure?.levels.shed.shed
      expectEqual('refused-shed: metrics().backpressure.levels.shed.shed', shed, calls)
    },
  },
  {
    id: 'refused-duplicate',
    label: 'duplicate idempotency key',
    setup: "loop not started, one message queued with `idempotencyKey: 'order-1'`; `tryPost` with that key",
    status: 'duplicate',
    error: DuplicateMessageError,
    prepare() {
      const loop = pausedLoop({})
      loop.post('tick', 0, DUPLICATE)
      return refuser(loop, 1, 'duplicate', DUPLICATE)
    },
    verify(loop, calls) {
      expectEqual('refused-duplicate: metrics.counters.duplicates', loop.metrics().counters.duplicates, calls)
    },
  },
]

/** Untimed calls before the timed ones, on the same loop (the JIT's warm-up). */
const WARM_UP = 10_000

/** The figures of one kind. */
export interface RefusalResult {
  readonly kind: RefusalKind
  /** ns per refused call, one per run. */
  readonly samples: number[]
  /** Errors built during the probe pass's calls (0 expected). */
  built: number
  /** Calls in the probe pass. */
  probeCalls: number
}

/**
 * Runs `calls` refusals after a warm-up on a fresh refusing loop, checks every count, then starts the
 * loop and drains what it had admitted.
 * @returns ns per call
 */
async function timeKind(kind: RefusalKind, calls: number, deadlineMs: number): Promise<number> {
  const refuser = kind.prepare()
  refuser.refuse(WARM_UP)
  collect()
  const t0 = performance.now()
  const { other } = refuser.refuse(calls)
  const ns = ((performance.now() - t0) * 1e6) / calls
  expectEqual(`${kind.id}: results with a status other than ${kind.status}`, other, 0)
  await settle(kind, refuser, WARM_UP + calls, deadlineMs)
  return ns
}

// The refusing loop's counters add up, then it runs what it admitted and stops.
async function settle(kind: RefusalKind, refuser: Refuser, calls: number, deadlineMs: number): Promise<void> {
  const { loop, admitted } = refuser
  const { counters } = loop.metrics()
  expectEqual(`${kind.id}: metrics.counters.posted`, counters.posted, admitted + calls)
  expectEqual(`${kind.id}: metrics.counters.accepted`, counters.accepted, admitted)
  expectEqual(`${kind.id}: metrics.counters.rejected`, counters.rejected, calls)
  kind.verify(loop, calls)
  loop.start()
  await withDeadline(loop.drain(), deadlineMs, () => `${kind.id}: the admitted messages did not drain`)
  expectEqual(`${kind.id}: metrics.counters.succeeded`, loop.metrics().counters.succeeded, admitted)
  await loop.stop()
}

/**
 * Counts the errors `calls` refusals build, then reads the last result's `error` inside the probe: it
 * must build exactly one, of the kind's class (else the probe, not the core, is broken).
 * @throws BenchError when the probe did not see the error that was read
 */
async function probeKind(kind: RefusalKind, calls: number, deadlineMs: number): Promise<number> {
  const refuser = kind.prepare()
  const { result } = countFlowingErrors((built) => {
    const { last } = refuser.refuse(calls)
    const during = built()
    const error = last?.ok === false && 'error' in last ? last.error : undefined
    if (!(error instanceof kind.error) || built() !== during + 1) {
      throw new BenchError(
        `${kind.id}: reading \`error\` built ${built() - during} error(s), expected 1 ${kind.error.name}`,
      )
    }
    return during
  })
  await settle(kind, refuser, calls, deadlineMs)
  return result
}

/** Interleaved timed runs of every kind (median ns per call), then one probe pass per kind. */
export async function measureRefusals(
  kinds: readonly RefusalKind[],
  plan: { readonly calls: number; readonly runs: number; readonly deadlineMs: number; log(line: string): void },
): Promise<RefusalResult[]> {
  const results: RefusalResult[] = kinds.map((kind) => ({ kind, samples: [], built: 0, probeCalls: 0 }))
  for (let run = 1; run <= plan.runs; run++) {
    for (const r of results) {
      r.samples.push(await timeKind(r.kind, plan.calls, plan.deadlineMs))
      plan.log(
        `  run ${run}/${plan.runs}  ${r.kind.label.padEnd(28)} ${(r.samples.at(-1) as number).toFixed(0).padStart(6)} ns per call`,
      )
    }
  }
  for (const r of results) {
    r.probeCalls = Math.min(plan.calls, 100_000)
    r.built = await probeKind(r.kind, r.probeCalls, plan.deadlineMs)
    plan.log(`  probe  ${r.kind.label.padEnd(28)} ${r.built} errors built in ${r.probeCalls} refused calls`)
  }
  return results
}

/** Median ns per refused call. */
export function refusalNs(result: RefusalResult): number {
  return median(result.samples)
}
