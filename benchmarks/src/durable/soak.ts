/**
 * The compaction soak: an SQLite NORMAL journal under steady posting at a fixed rate for a while — a
 * fifth of the posts delayed by 2 s, so a standing backlog of a few thousand rows lives in the file
 * while hundreds of thousands pass through it — sampling the database and `-wal` sizes every few
 * seconds. The file must stay near the size of the backlog, not grow with the messages processed.
 * Counts are checked at the end (every message handled once, the journal empty); sizes only reported.
 *
 * @module
 */
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { createLoop, type Loop } from '@flowing/core'
import { inspectJournal, sqliteStore } from '@flowing/sqlite'
import { expectEqual, withDeadline } from '../lib/check.js'
import { counting, sqliteBytes, tempDir } from './journals.js'
import { type DurableMessages, durableWorkload, payment, quantile, sleep, Tally } from './workload.js'

/** The soak's knobs. */
export interface SoakOptions {
  readonly durationMs: number
  readonly sampleEveryMs: number
  /** Posts per second, spread over 10 ms ticks, each tick acknowledged by `flushed()`. */
  readonly ratePerSec: number
  /** Share of posts delayed by {@link SoakOptions.delayMs} (the standing backlog). */
  readonly delayedShare: number
  readonly delayMs: number
}

/** One sample of the file and the loop. */
export interface SoakSample {
  readonly atS: number
  readonly posted: number
  readonly handled: number
  /** Messages the loop holds: queued, running, delayed — each a row in the journal. */
  readonly backlog: number
  readonly dbBytes: number
  readonly walBytes: number
}

/** What the soak measured. */
export interface SoakResult {
  readonly options: SoakOptions
  readonly samples: readonly SoakSample[]
  /** The file after the stop (closing checkpoints and removes the `-wal`). */
  readonly closedBytes: number
  readonly posted: number
  readonly commits: number
  readonly ackP50: number
  readonly ackP99: number
}

/** The full soak (60 s), or the smoke one (1 s). */
export function soakOptions(smoke: boolean): SoakOptions {
  return smoke
    ? { durationMs: 1_000, sampleEveryMs: 250, ratePerSec: 5_000, delayedShare: 0.2, delayMs: 200 }
    : { durationMs: 60_000, sampleEveryMs: 5_000, ratePerSec: 5_000, delayedShare: 0.2, delayMs: 2_000 }
}

function backlogOf(loop: Loop<DurableMessages>): number {
  const g = loop.metrics().gauges
  return g.queued + g.parked + g.running + g.delayed + g.overdue + g.retrying
}

/** Posts at the fixed rate until the duration is over, sampling as it goes; returns the ack latencies. */
async function post(loop: Loop<DurableMessages>, o: SoakOptions, sample: (atMs: number) => void): Promise<number[]> {
  const w = durableWorkload(false)
  const total = Math.round((o.ratePerSec * o.durationMs) / 1000)
  const delayEvery = Math.round(1 / o.delayedShare)
  const acks: number[] = []
  const t0 = performance.now()
  let posted = 0
  let nextSample = 0
  while (posted < total) {
    const elapsed = performance.now() - t0
    const due = Math.min(total, Math.floor((o.ratePerSec * elapsed) / 1000))
    const tb = performance.now()
    for (; posted < due; posted++) {
      const p = payment(w, posted)
      if (posted % delayEvery === delayEvery - 1) loop.postDelayed('order.paid', p, o.delayMs)
      else loop.post('order.paid', p, { key: p.orderId })
    }
    await loop.flushed()
    acks.push(performance.now() - tb)
    if (elapsed >= nextSample) {
      sample(elapsed)
      nextSample += o.sampleEveryMs
    }
    await sleep(10)
  }
  return acks
}

/** Runs the soak in a temp dir and removes it. */
export async function runSoak(o: SoakOptions): Promise<SoakResult> {
  const dir = tempDir('soak')
  const path = join(dir, 'journal.db')
  const sqlite = sqliteStore({ path, synchronous: 'normal' })
  try {
    const { store, written } = counting(sqlite)
    const total = Math.round((o.ratePerSec * o.durationMs) / 1000)
    const tally = new Tally(total)
    const loop = createLoop<DurableMessages>({ store, workers: 8, capacity: total, autoStart: false, logger: false })
    loop.on('order.paid', async (m) => {
      await nextTurn()
      tally.ran(m.payload.seq)
    })
    loop.start()
    const samples: SoakSample[] = []
    const t0 = performance.now()
    const sample = (atMs: number) => {
      const { db, wal } = sqliteBytes(path)
      const posted = loop.metrics().counters.accepted
      samples.push({
        atS: atMs / 1000,
        posted,
        handled: tally.calls,
        backlog: backlogOf(loop),
        dbBytes: db,
        walBytes: wal,
      })
    }
    const acks = await post(loop, o, sample)
    const settled = async () => {
      while (backlogOf(loop) > 0) await sleep(20)
      await loop.flushed()
    }
    await withDeadline(settled(), 60_000, () => `soak: ${tally.calls} of ${total} handled`)
    sample(performance.now() - t0)
    await loop.stop()
    expectEqual('soak: accepted', loop.metrics().counters.accepted, total)
    tally.expectOnce('soak', total)
    const left = inspectJournal(path).messages
    expectEqual('soak: messages left in the journal', left.queued + left.delayed + left['retry-scheduled'], 0)
    const closed = sqliteBytes(path)
    return {
      options: o,
      samples,
      closedBytes: closed.db + closed.wal,
      posted: total,
      commits: written.commits,
      ackP50: quantile(acks, 0.5),
      ackP99: quantile(acks, 0.99),
    }
  } finally {
    sqlite.close()
    rmSync(dir, { recursive: true, force: true })
  }
}
