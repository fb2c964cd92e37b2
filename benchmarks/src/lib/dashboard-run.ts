/**
 * One run of one case of the dashboard benchmark: a fresh loop fed the suite's streamed shape
 * without end (1,000 posts per event-loop turn), with or without a dashboard and an open page, and
 * the messages that finished in a window of steady posting — seconds long, because the dashboard
 * ticks once a second and samples per-message events 20 ms a second.
 *
 * @module
 */
import type { PageClient } from './dashboard-page.js'
import { sleep } from './dashboard-page.js'
import {
  benchLoop,
  closePage,
  expectNoPerMessageListeners,
  feed,
  measureWindow,
  mount,
  openPage,
  unmount,
  type WindowReading,
} from './dashboard-setup.js'
import { checkLoopAtRest } from './flowing.js'

/** The cases, in the order of the table. */
export type CaseId = 'plain' | 'closed' | 'overview' | 'keys'

export const CASES: readonly { readonly id: CaseId; readonly name: string }[] = [
  { id: 'plain', name: 'plain loop, no dashboard' },
  { id: 'closed', name: 'dashboard, no page open' },
  { id: 'overview', name: 'dashboard, one page open (overview)' },
  { id: 'keys', name: 'dashboard, one page open (keys)' },
]

/** How long a run posts before and inside its window. */
export interface RunTiming {
  /** Posting before the window: the loop (and an open page's first, exact seconds) settles. */
  readonly settleMs: number
  /** The measured window. */
  readonly windowMs: number
}

/**
 * One run of case `id`: a fresh loop (and dashboard, server, page), posting from the start, the
 * window after `timing.settleMs` (and, with a page, after its first two ticks), then the posts
 * stopped, the loop drained and everything checked.
 * @throws BenchError when a check fails (never on speed)
 */
export async function runCase(id: CaseId, timing: RunTiming): Promise<WindowReading> {
  const what = `${id} case`
  const loop = benchLoop()
  const mounted = id === 'plain' ? undefined : await mount(loop)
  const stop = feed(loop)
  const settled = sleep(timing.settleMs)
  let page: PageClient | undefined
  if (mounted !== undefined && id !== 'closed') page = await openPage(what, mounted, id)
  await settled
  if (id === 'closed') expectNoPerMessageListeners(`${what}, window start`, loop)
  const open = page !== undefined && mounted !== undefined ? { page, mounted } : undefined
  const reading = await measureWindow(what, loop, timing.windowMs, open)
  if (id === 'closed') expectNoPerMessageListeners(`${what}, window end`, loop)
  const posted = await stop()
  await loop.drain()
  if (open !== undefined) await closePage(what, open.page, open.mounted, loop)
  if (mounted !== undefined) await unmount(mounted)
  checkLoopAtRest(what, loop, posted)
  await loop.stop()
  return reading
}
