/**
 * Section 1 — what rate-limit and key-group bookkeeping costs per message when it never binds: the
 * same keyed no-op async workload on 8 workers with no limit, a per-type limit, a per-key limit
 * (integer and `order-1234` string keys), a loop-wide limit and a key group of concurrency 8.
 *
 * @module
 */
import { createLoop, type Loop, type LoopOptions, type MessageKey, type RegisterOptions } from '@flowing/core'
import { expectEqual } from '../lib/check.js'
import type { BenchMessages } from '../lib/flowing.js'
import { feed, type Mode, stringKeys, type Workload } from '../lib/workload.js'
import type { FlowCase } from './rounds.js'

/** Workers of every loop in this suite (the peers' concurrency too). */
export const WORKERS = 8

/**
 * A limit no run reaches: a million starts per millisecond (10⁹/s), so only the bookkeeping is paid.
 * The window's ring of start times grows to min(max, N) entries.
 */
export const NEVER_BINDS = { max: 1_000_000, perMs: 1 } as const

/** The same rate with a small ring: 64 starts per 10 µs (6.4 M/s), still above anything measured here. */
export const NEVER_BINDS_SMALL = { max: 64, perMs: 0.01 } as const

/** One row of the section: loop options, registration options, a post option, the key kind. */
interface LimitVariant {
  readonly id: string
  readonly label: string
  readonly keys: 'int' | 'string'
  readonly loop?: Partial<LoopOptions>
  readonly on?: RegisterOptions
  readonly group?: string
}

const VARIANTS: readonly LimitVariant[] = [
  { id: 'none', label: 'no limit', keys: 'int' },
  { id: 'none-str', label: 'no limit, string keys', keys: 'string' },
  { id: 'type', label: 'per-type limit 10⁶/1 ms (on(…, { rateLimit }))', keys: 'int', on: { rateLimit: NEVER_BINDS } },
  {
    id: 'type-small',
    label: 'per-type limit 64/0.01 ms (small ring)',
    keys: 'int',
    on: { rateLimit: NEVER_BINDS_SMALL },
  },
  {
    id: 'key',
    label: 'per-key limit 10⁶/1 ms, integer keys',
    keys: 'int',
    on: { rateLimit: { ...NEVER_BINDS, per: 'key' } },
  },
  {
    id: 'key-str',
    label: 'per-key limit 10⁶/1 ms, string keys',
    keys: 'string',
    on: { rateLimit: { ...NEVER_BINDS, per: 'key' } },
  },
  {
    id: 'loop',
    label: 'loop-wide limit 10⁶/1 ms (createLoop rateLimit)',
    keys: 'int',
    loop: { rateLimit: NEVER_BINDS },
  },
  {
    id: 'group',
    label: 'one key group, concurrency 8 (post group)',
    keys: 'int',
    loop: { groups: { concurrency: WORKERS } },
    group: 'tenant-a',
  },
]

/** The baseline row of a variant: the unlimited one with the same key kind. */
export function baselineId(id: string): string {
  return id.endsWith('-str') ? `none-str@${id.split('@')[1]}` : `none@${id.split('@')[1]}`
}

function postAll(
  loop: Loop<BenchMessages>,
  v: LimitVariant,
  keys: readonly MessageKey[],
): (a: number, b: number) => void {
  const group = v.group
  if (group !== undefined) {
    return (from, to) => {
      for (let i = from; i < to; i++) loop.post('tick', i, { key: keys[i] as MessageKey, group })
    }
  }
  return (from, to) => {
    for (let i = from; i < to; i++) loop.post('tick', i, { key: keys[i] as MessageKey })
  }
}

/** Runs one variant on the first `n` messages of `workload` in `mode`; returns the seconds. */
async function runVariant(v: LimitVariant, workload: Workload, n: number, mode: Mode): Promise<number> {
  const loop = createLoop<BenchMessages>({ capacity: Math.max(1, n), workers: WORKERS, ...v.loop })
  let processed = 0
  loop.on(
    'tick',
    async () => {
      processed++
    },
    v.on,
  )
  const keys: MessageKey[] =
    v.keys === 'string' ? stringKeys(workload).slice(0, n) : Array.from(workload.keys.subarray(0, n))
  const post = postAll(loop, v, keys)
  const t0 = performance.now()
  await feed(post, n, mode)
  await loop.drain()
  const seconds = (performance.now() - t0) / 1000
  const what = `flow ${v.id} ${mode}`
  expectEqual(`${what}: handler calls`, processed, n)
  const { counters } = loop.metrics()
  expectEqual(`${what}: metrics.counters.succeeded`, counters.succeeded, n)
  expectEqual(`${what}: metrics.counters.rateLimited (the limit must never bind)`, counters.rateLimited, 0)
  await loop.stop()
  return seconds
}

/** The section's cases: every variant in burst and streamed mode (`id@mode`). */
export function limiterCases(workload: Workload): FlowCase[] {
  const out: FlowCase[] = []
  for (const mode of ['burst', 'streamed'] as const) {
    for (const v of VARIANTS) {
      out.push({ id: `${v.id}@${mode}`, label: `${mode}: ${v.label}`, run: (n) => runVariant(v, workload, n, mode) })
    }
  }
  return out
}
