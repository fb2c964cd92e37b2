/**
 * The actions a page (or a script with the token) may take, each named for the app's `authorize`
 * hook: replay and purge dead letters, cancel a message or a keyed delay, pause and resume the loop,
 * a message type or a schedule, resize the workers, force a breaker open or closed.
 *
 * @module
 */
import type { LoopSource, ShownLoop } from '../collect/loop-source.js'
import { HttpError } from '../http/respond.js'
import type { DashboardAction } from '../options.js'
import { purge, replay } from './dead-letters.js'

type Body = Record<string, unknown>
type Act = (loop: ShownLoop, body: Body, source: LoopSource) => unknown

/** One route of an action: its `authorize` name and what it does. */
export interface ActionRoute {
  readonly action: Exclude<DashboardAction, 'view'>
  readonly run: Act
}

/** The actions by their path under `/api/loops/:loop/`. */
export const ACTION_ROUTES: ReadonlyMap<string, ActionRoute> = new Map<string, ActionRoute>([
  ['dead-letters/replay', { action: 'replay', run: (_loop, body, source) => replay(source.letters, body) }],
  ['dead-letters/purge', { action: 'purge', run: (_loop, body, source) => purge(source.letters, body) }],
  ['messages/cancel', { action: 'cancel', run: (loop, body) => ({ result: loop.cancel(text(body, 'id')) }) }],
  ['jobs/cancel', { action: 'cancel', run: (loop, body) => ({ result: loop.jobs.cancel(text(body, 'jobKey')) }) }],
  ['pause', { action: 'pause', run: (loop) => state(loop.pause()) }],
  ['resume', { action: 'resume', run: (loop) => state(loop.resume()) }],
  ['schedules/pause', { action: 'pause', run: (loop, body) => ({ paused: loop.schedules.pause(text(body, 'id')) }) }],
  [
    'schedules/resume',
    { action: 'resume', run: (loop, body) => ({ resumed: loop.schedules.resume(text(body, 'id')) }) },
  ],
  ['types/pause', { action: 'pause', run: (loop, body) => pausedTypes(loop.controls.pauseType(text(body, 'type'))) }],
  [
    'types/resume',
    { action: 'resume', run: (loop, body) => pausedTypes(loop.controls.resumeType(text(body, 'type'))) },
  ],
  ['workers', { action: 'resize', run: (loop, body) => resize(loop, body) }],
  ['circuits/open', { action: 'open-circuit', run: (loop, body) => circuit(loop, body, true) }],
  ['circuits/close', { action: 'close-circuit', run: (loop, body) => circuit(loop, body, false) }],
])

function text(body: Body, name: string): string {
  const value = body[name]
  if (typeof value !== 'string' || value === '' || value.length > 1024) {
    throw new HttpError(400, 'bad-request', `\`${name}\` must be a non-empty string`)
  }
  return value
}

const state = (loop: ShownLoop) => ({ state: loop.state })
const pausedTypes = (controls: ShownLoop['controls']) => ({ pausedTypes: controls.pausedTypes() })

function resize(loop: ShownLoop, body: Body) {
  const workers = body['workers']
  if (typeof workers !== 'number' || !Number.isInteger(workers) || workers < 1 || workers > 4096) {
    throw new HttpError(400, 'bad-request', '`workers` must be an integer from 1 to 4096')
  }
  loop.resize(workers)
  return { workers: loop.metrics().gauges.workers }
}

function circuit(loop: ShownLoop, body: Body, open: boolean) {
  const type = text(body, 'type')
  const routeKey = body['routeKey'] === undefined ? {} : { routeKey: text(body, 'routeKey') }
  if (open) loop.controls.openCircuit(type, routeKey)
  else loop.controls.closeCircuit(type, routeKey)
  return { circuits: loop.circuits() }
}

/** Runs `route` on the loop; the loop's own refusals (a typed error) come back as 409 with its message. */
export async function runAction(route: ActionRoute, source: LoopSource, body: Body): Promise<unknown> {
  try {
    return await route.run(source.loop, body, source)
  } catch (error) {
    if (error instanceof HttpError) throw error
    const message = error instanceof Error ? error.message : String(error)
    throw new HttpError(409, 'refused', message)
  }
}
