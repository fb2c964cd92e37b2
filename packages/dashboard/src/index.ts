/**
 * **@flowing/dashboard** — a live web UI for Flowing loops, mounted in the application's own HTTP
 * server: per-type rates, watermarks, workers and the event loop; the busiest and blocked keys; breakers
 * and rate limits; schedules and keyed delays; dead letters to inspect, replay and purge; a message's
 * timeline of attempts. Live over Server-Sent Events, read-only unless the app authorizes actions,
 * CSRF-protected, with a strict Content-Security-Policy and no CDN.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http'
 * import { createLoop } from '@flowing/core'
 * import { createDashboard } from '@flowing/dashboard'
 *
 * const loop = createLoop()
 * const dashboard = createDashboard({ loops: { orders: loop } })
 * const server = createServer(dashboard.handler).listen(0) // the page: /flowing/
 * server.close()
 * dashboard.close()
 * await loop.stop()
 * ```
 *
 * @packageDocumentation
 * @module @flowing/dashboard
 */

export type { LetterFilter } from './api/dead-letters.js'
export type { HiddenPayload } from './api/redaction.js'
export type { Overview, ViewName } from './api/views.js'
export type { LoopHappening, SeriesPoint } from './collect/collector.js'
export type { SharedLetters } from './collect/letters.js'
export type { DashboardLoop, NatsLikeLoop } from './collect/loop-source.js'
export type { TypeRate } from './collect/type-rates.js'
export { createDashboard, Dashboard, type DashboardHandler } from './dashboard.js'
export { CSP } from './http/respond.js'
export {
  ACTIONS,
  type Authorize,
  type DashboardAction,
  type DashboardOptions,
  type Redactor,
} from './options.js'
export { type ServedDashboard, type ServeOptions, serve } from './serve.js'
