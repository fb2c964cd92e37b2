/**
 * One Flowing run of the durable workload on one journal: the batched mode (bursts of 1,000 posts,
 * `await loop.flushed()` after each, all N handled) and the one-post-one-`flushed()` latency mode. Each
 * run checks its counts — every message handled exactly once, the loop at rest, the journal empty
 * after the stop — and throws a `BenchError` when one does not add up.
 *
 * @module
 */
import { setImmediate as nextTurn } from 'node:timers/promises'
import { createLoop, type Loop } from '@flowing/core'
import { expectEqual, withDeadline } from '../lib/check.js'
import type { JournalKind, OpenJournal, Written } from './journals.js'
import { type DurableMessages, type DurableWorkload, payment, Tally } from './workload.js'

/** What a batched run measured. */
export interface BatchedSample {
  /** Messages per second, first post to the last handler done (and its removal committed). */
  readonly msgsPerSec: number
  readonly seconds: number
  /** ms from each burst's first post to its `flushed()` resolution. */
  readonly acks: readonly number[]
  /** What the loop wrote to its journal (`undefined` for a job queue). */
  readonly written: Written | undefined
  /** Largest journal size seen after an acknowledgement, and its size once everything finished. */
  readonly peakBytes: number | undefined
  readonly endBytes: number | undefined
}

/** What the one-at-a-time mode measured. */
export interface SinglesSample {
  /** ms from each `post()` to its `flushed()` resolution. */
  readonly acks: readonly number[]
  /** Acknowledged posts per second. */
  readonly acksPerSec: number
  /** What the loop wrote to its journal (`undefined` for a job queue). */
  readonly written: Written | undefined
}

const DEADLINE_MS = 600_000

function durableLoop(
  journal: OpenJournal,
  w: DurableWorkload,
  tally: Tally,
  maxCrashes: number | undefined,
): Loop<DurableMessages> {
  const loop = createLoop<DurableMessages>({
    ...(journal.store === undefined ? {} : { store: journal.store }),
    ...(maxCrashes === undefined ? {} : { maxCrashes }),
    workers: w.workers,
    capacity: w.n,
    autoStart: false,
    logger: false,
  })
  if (w.handler === 'turn') {
    loop.on('order.paid', async (m) => {
      await nextTurn()
      tally.ran(m.payload.seq)
    })
  } else {
    loop.on('order.paid', async (m) => {
      tally.ran(m.payload.seq)
    })
  }
  loop.start()
  return loop
}

/** Stops the loop, then checks every count: exactly once, at rest, nothing left in the journal. */
async function finish(what: string, loop: Loop<DurableMessages>, journal: OpenJournal, tally: Tally, n: number) {
  const { counters, gauges } = loop.metrics()
  await loop.stop()
  expectEqual(`${what}: accepted`, counters.accepted, n)
  expectEqual(`${what}: succeeded`, counters.succeeded, n)
  for (const name of ['rejected', 'failed', 'dropped', 'cancelled', 'deadLettered'] as const) {
    expectEqual(`${what}: ${name}`, counters[name], 0)
  }
  expectEqual(`${what}: queued + running at the end`, gauges.queued + gauges.running, 0)
  tally.expectOnce(what, n)
  expectEqual(`${what}: messages left in the journal after the stop`, await journal.leftOver(), 0)
}

/** The batched mode: N posts in bursts, each acknowledged by `flushed()`; all handled. */
export async function batchedRun(kind: JournalKind, w: DurableWorkload): Promise<BatchedSample> {
  const journal = await kind.open()
  try {
    const tally = new Tally(w.n)
    const loop = durableLoop(journal, w, tally, kind.maxCrashes)
    const acks: number[] = []
    let peak = journal.bytes()
    const t0 = performance.now()
    for (let from = 0; from < w.n; from += w.burst) {
      const tb = performance.now()
      for (let seq = from; seq < Math.min(w.n, from + w.burst); seq++) {
        const p = payment(w, seq)
        loop.post('order.paid', p, { key: p.orderId })
      }
      await loop.flushed()
      acks.push(performance.now() - tb)
      const bytes = journal.bytes()
      if (bytes !== undefined && (peak === undefined || bytes > peak)) peak = bytes
    }
    await withDeadline(loop.drain(), DEADLINE_MS, () => `${kind.label}: ${tally.calls} of ${w.n} handled`)
    await loop.flushed()
    const seconds = (performance.now() - t0) / 1000
    const written = journal.store === undefined ? undefined : { ...journal.written }
    await journal.measure?.()
    const endBytes = journal.bytes()
    await finish(`${kind.label} batched`, loop, journal, tally, w.n)
    return { msgsPerSec: w.n / seconds, seconds, acks, written, peakBytes: peak, endBytes }
  } finally {
    await journal.dispose()
  }
}

/** The latency mode: one post, one `await flushed()`, `w.singles` times; then all handled. */
export async function singlesRun(kind: JournalKind, w: DurableWorkload): Promise<SinglesSample> {
  const journal = await kind.open()
  try {
    const tally = new Tally(w.singles)
    const loop = durableLoop(journal, w, tally, kind.maxCrashes)
    const acks: number[] = []
    const t0 = performance.now()
    for (let seq = 0; seq < w.singles; seq++) {
      const p = payment(w, seq)
      const tp = performance.now()
      loop.post('order.paid', p, { key: p.orderId })
      await loop.flushed()
      acks.push(performance.now() - tp)
    }
    const seconds = (performance.now() - t0) / 1000
    await withDeadline(loop.drain(), DEADLINE_MS, () => `${kind.label} singles: ${tally.calls} handled`)
    await loop.flushed()
    const written = journal.store === undefined ? undefined : { ...journal.written }
    await finish(`${kind.label} one at a time`, loop, journal, tally, w.singles)
    return { acks, acksPerSec: w.singles / seconds, written }
  } finally {
    await journal.dispose()
  }
}
