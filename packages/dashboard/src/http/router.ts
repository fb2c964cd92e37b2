/**
 * The dashboard's routes under its base path: the page and its assets, the JSON API, the live stream,
 * and the actions. Every request is authorized (`view`, or the action's name) before anything is read;
 * every action passes the CSRF check first.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { ACTION_ROUTES, runAction } from '../api/actions.js'
import { letterFilter, matching } from '../api/dead-letters.js'
import type { Redaction } from '../api/redaction.js'
import * as views from '../api/views.js'
import type { Collector } from '../collect/collector.js'
import type { DashboardAction, ResolvedOptions } from '../options.js'
import { ACTIONS } from '../options.js'
import { asset } from './assets.js'
import type { Csrf } from './csrf.js'
import { checkPath, decodeSegment, type RequestPath } from './request-path.js'
import { HttpError, json, readJson, send } from './respond.js'

/** What the routes read: the options, the loops' collectors, the CSRF keeper, the redaction, the streams. */
export interface RouteContext {
  readonly options: ResolvedOptions
  readonly collectors: ReadonlyMap<string, Collector>
  readonly csrf: Csrf
  readonly redaction: Redaction
  /** Opens a page's live stream on `collector`. */
  stream(req: IncomingMessage, res: ServerResponse, collector: Collector, view: views.ViewName): void
}

/** Answers one request whose path (under the base path) is `path`. */
export async function route(
  ctx: RouteContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: RequestPath,
): Promise<void> {
  const path = url.pathname.slice(ctx.options.basePath.length) || '/'
  checkPath(path)
  const method = req.method ?? 'GET'
  if (method === 'POST') return act(ctx, req, res, path)
  if (method !== 'GET' && method !== 'HEAD') throw new HttpError(405, 'method', `${method} is not allowed here`)
  await authorize(ctx, req, 'view')
  if (path === '/' || path === '/index.html') return page(ctx, req, res, 'index.html')
  if (path.startsWith('/assets/')) return page(ctx, req, res, path.slice('/assets/'.length))
  if (path === '/api/session') return json(req, res, 200, await session(ctx, req, res))
  if (path === '/api/loops') return json(req, res, 200, loopList(ctx))
  const m = /^\/api\/loops\/([^/]+)\/(.+)$/.exec(path)
  if (m === null) throw new HttpError(404, 'not-found', 'no such page')
  return read(ctx, req, res, collectorOf(ctx, m[1] as string), m[2] as string, url.searchParams)
}

function page(ctx: RouteContext, req: IncomingMessage, res: ServerResponse, name: string): void {
  const file = asset(name)
  if (file === undefined) throw new HttpError(404, 'not-found', 'no such asset')
  if (name === 'index.html') ctx.csrf.issue(req, res)
  const cache = name === 'index.html' ? 'no-store' : 'public, max-age=300'
  send(req, res, 200, file.type, file.body, { zipped: file.zipped, cache })
}

async function session(ctx: RouteContext, req: IncomingMessage, res: ServerResponse) {
  const allowed: Record<string, boolean> = {}
  for (const action of ACTIONS) allowed[action] = await permits(ctx, req, action)
  const readOnly = !Object.values(allowed).some(Boolean)
  return { csrf: ctx.csrf.issue(req, res), readOnly, actions: allowed, loops: loopList(ctx) }
}

function loopList(ctx: RouteContext) {
  return [...ctx.collectors.values()].map((c) => ({
    name: c.source.name,
    kind: c.source.kind,
    state: c.source.loop.state,
    views: views.viewsOf(c, ctx.options.threads),
  }))
}

function collectorOf(ctx: RouteContext, encoded: string): Collector {
  const name = decodeSegment(encoded)
  const c = ctx.collectors.get(name)
  if (c === undefined) throw new HttpError(404, 'not-found', 'no loop of that name')
  return c
}

async function read(
  ctx: RouteContext,
  req: IncomingMessage,
  res: ServerResponse,
  c: Collector,
  what: string,
  q: URLSearchParams,
) {
  const param = (name: string) => q.get(name) ?? undefined
  if (what === 'stream') return ctx.stream(req, res, c, viewOf(param('view')))
  const letter = /^dead-letters\/([^/]+)$/.exec(what)
  if (letter !== null) return json(req, res, 200, await oneLetter(ctx, c, decodeSegment(letter[1] as string)))
  return json(req, res, 200, await viewData(ctx, c, what, param))
}

async function viewData(ctx: RouteContext, c: Collector, what: string, param: (name: string) => string | undefined) {
  const source = c.source

  switch (what) {
    case 'overview':
      return views.overview(c)
    case 'series':
      return c.series.toArray()
    case 'keys':
      return views.keys(source, limitOf(param('limit'), 50))
    case 'flow':
      return views.flow(c)
    case 'delayed':
      return views.delayed(source, ctx.redaction)
    case 'dead-letters':
      return await deadLetters(c, param)
    case 'messages':
      return {
        ...clockOf(c),
        traces: views.timeline(source, { id: param('id'), key: param('key'), trace: param('trace') } as never),
      }
    case 'threads':
      return views.threads(ctx.options.threads)
    case 'nats':
      return views.nats(source) ?? null
    default:
      throw new HttpError(404, 'not-found', 'no such view')
  }
}

async function deadLetters(c: Collector, param: (name: string) => string | undefined) {
  const all = await matching(c.source.letters, letterFilter(param))
  const limit = limitOf(param('limit'), 200, MAX_LETTERS)
  const letters = all.slice(-limit).reverse() // newest first
  return { ...clockOf(c), total: all.length, letters: letters.map(views.letterSummary) }
}

async function oneLetter(ctx: RouteContext, c: Collector, id: string) {
  const letter = await c.source.letters.get(id)
  if (letter === undefined) throw new HttpError(404, 'not-found', 'no dead letter with that id')
  return { ...clockOf(c), letter: views.letterDetail(letter, ctx.redaction) }
}

// The loop's clock now and the wall time then: a page turns a letter's `at` into a date.
function clockOf(c: Collector) {
  return { now: c.source.loop.inspect({ keys: 0 }).at, wall: Date.now() }
}

// The most letters one list answers (each a summary: the detail is one request per letter).
const MAX_LETTERS = 1000

function limitOf(value: string | undefined, fallback: number, max = 10_000): number {
  if (value === undefined) return fallback
  const n = Number(value)
  if (!Number.isInteger(n) || n < 1 || n > max) throw new HttpError(400, 'bad-request', `\`limit\` must be 1–${max}`)
  return n
}

function viewOf(value: string | undefined): views.ViewName {
  if (value === undefined) return 'overview'
  if (!(views.VIEWS as readonly string[]).includes(value)) throw new HttpError(400, 'bad-request', 'no such view')
  return value as views.ViewName
}

async function act(ctx: RouteContext, req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
  const m = /^\/api\/loops\/([^/]+)\/(.+)$/.exec(path)
  const actionRoute = m === null ? undefined : ACTION_ROUTES.get(m[2] as string)
  if (m === null || actionRoute === undefined) throw new HttpError(404, 'not-found', 'no such action')
  ctx.csrf.check(req)
  await authorize(ctx, req, actionRoute.action)
  const c = collectorOf(ctx, m[1] as string)
  const body = await readJson(req)
  json(req, res, 200, await runAction(actionRoute, c.source, body))
}

async function permits(ctx: RouteContext, req: IncomingMessage, action: DashboardAction): Promise<boolean> {
  const hook = ctx.options.authorize
  if (hook === undefined) return action === 'view'
  try {
    return (await hook(req, action)) === true
  } catch {
    return false
  }
}

async function authorize(ctx: RouteContext, req: IncomingMessage, action: DashboardAction): Promise<void> {
  if (!(await permits(ctx, req, action))) {
    throw new HttpError(403, 'forbidden', action === 'view' ? 'not allowed to view' : `not allowed to ${action}`)
  }
}
