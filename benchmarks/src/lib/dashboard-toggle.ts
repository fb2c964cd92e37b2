/**
 * The cost of one open page measured on one loop: a dashboard over a fresh loop, posting without
 * end, and four windows in the order closed, open, open, closed (A B B A) — the page opened before
 * the first B and closed after the second. Each fresh loop settles at a speed of its own (optimized
 * code and heap layout differ from loop to loop): a ratio of windows on one loop leaves that out, and
 * A B B A cancels a linear drift.
 *
 * @module
 */
import type { Loop } from '@flowing/core'
import { sleep } from './dashboard-page.js'
import type { RunTiming } from './dashboard-run.js'
import {
  benchLoop,
  closePage,
  expectNoPerMessageListeners,
  feed,
  type Mounted,
  measureWindow,
  mount,
  openPage,
  unmount,
} from './dashboard-setup.js'
import { type BenchMessages, checkLoopAtRest } from './flowing.js'

/** One loop's A B B A: msgs/s with no page open (A), with the overview page open (B). */
export interface ToggleSample {
  readonly closed: readonly [number, number]
  readonly open: readonly [number, number]
  /** Sum of the B rates ÷ sum of the A rates. */
  readonly ratio: number
}

const WHAT = 'same loop, page toggled'

async function closedWindow(loop: Loop<BenchMessages>, ms: number): Promise<number> {
  expectNoPerMessageListeners(`${WHAT}, closed window start`, loop)
  const { rate } = await measureWindow(WHAT, loop, ms)
  expectNoPerMessageListeners(`${WHAT}, closed window end`, loop)
  return rate
}

/** Opens the overview page, measures two windows, closes it. */
async function openWindows(loop: Loop<BenchMessages>, mounted: Mounted, ms: number): Promise<[number, number]> {
  const page = await openPage(WHAT, mounted, 'overview')
  const first = await measureWindow(WHAT, loop, ms, { page, mounted })
  const second = await measureWindow(WHAT, loop, ms, { page, mounted })
  await closePage(WHAT, page, mounted, loop)
  return [first.rate, second.rate]
}

/**
 * One A B B A run on a fresh loop with a dashboard; then the posts stopped, the loop drained and checked.
 * @throws BenchError when a check fails (never on speed)
 */
export async function runToggle(timing: RunTiming): Promise<ToggleSample> {
  const loop = benchLoop()
  const mounted = await mount(loop)
  const stop = feed(loop)
  await sleep(timing.settleMs)
  const a1 = await closedWindow(loop, timing.windowMs)
  const open = await openWindows(loop, mounted, timing.windowMs)
  const a2 = await closedWindow(loop, timing.windowMs)
  const posted = await stop()
  await loop.drain()
  await unmount(mounted)
  checkLoopAtRest(WHAT, loop, posted)
  await loop.stop()
  return { closed: [a1, a2], open, ratio: (open[0] + open[1]) / (a1 + a2) }
}
