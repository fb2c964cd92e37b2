/**
 * How the dashboard answers: security headers on every response (a strict Content-Security-Policy:
 * scripts, styles and connections from the dashboard itself only, no inline code, no frames), JSON
 * that a browser never sniffs as HTML, and gzip when the client takes it.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { gzipSync } from 'node:zlib'
import { toJson } from '../api/json.js'

/** The Content-Security-Policy of every response. */
export const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
}

/** Sets the security headers on `res`. */
export function secure(res: ServerResponse): void {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value)
}

// Bodies smaller than this go uncompressed: gzip would not pay for its header.
const GZIP_FROM = 1024
// Nor larger ones: a synchronous gzip of megabytes would hold the app's event loop.
const GZIP_UP_TO = 1024 * 1024

/** Whether the request takes gzip. */
export function takesGzip(req: IncomingMessage): boolean {
  const accept = req.headers['accept-encoding']
  return typeof accept === 'string' && /\bgzip\b/.test(accept)
}

/** Sends `body` with `status` and `type`, gzipped when it pays and the client takes it (`zipped`: a cached gzip). */
export function send(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  type: string,
  body: Buffer,
  extra: { zipped?: Buffer; cache?: string } = {},
): void {
  secure(res)
  res.statusCode = status
  res.setHeader('content-type', type)
  res.setHeader('cache-control', extra.cache ?? 'no-store')
  res.setHeader('vary', 'accept-encoding')
  let out = body
  if (body.length >= GZIP_FROM && body.length <= GZIP_UP_TO && takesGzip(req)) {
    out = extra.zipped ?? gzipSync(body)
    res.setHeader('content-encoding', 'gzip')
  }
  res.setHeader('content-length', out.length)
  res.end(req.method === 'HEAD' ? undefined : out)
}

/** Sends `value` as JSON. */
export function json(req: IncomingMessage, res: ServerResponse, status: number, value: unknown): void {
  send(req, res, status, 'application/json; charset=utf-8', Buffer.from(toJson(value)))
}

/**
 * An error the API answers with its status: `{ error: { code, message } }`.
 */
export class HttpError extends Error {
  /**
   * @param status - the HTTP status
   * @param code - a stable code (`forbidden`, `csrf`, `not-found`, `bad-request`, …)
   * @param message - what went wrong, for a person
   */
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message)
    this.name = 'HttpError'
  }
}

/** Answers `error` (an `HttpError`, or anything else as a 500 that does not leak its details). */
export function fail(req: IncomingMessage, res: ServerResponse, error: unknown): void {
  if (res.headersSent) {
    res.destroy()
    return
  }
  const e = error instanceof HttpError ? error : new HttpError(500, 'internal', 'the dashboard failed to answer')
  if (e.status === 413) res.setHeader('connection', 'close') // its body left unread: the connection cannot be reused
  json(req, res, e.status, { error: { code: e.code, message: e.message } })
}

// The most an action's JSON body may weigh.
const MAX_BODY = 64 * 1024

/** Reads a JSON object body (at most 64 KiB). */
export async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const parsed = (req as { body?: unknown }).body // a framework's JSON parser read it already (Express, Fastify)
  if (parsed !== undefined && !req.readable) return asObject(parsed)
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > MAX_BODY) throw new HttpError(413, 'too-large', 'the request body is over 64 KiB')
    chunks.push(chunk as Buffer)
  }
  if (size === 0) return {}
  let body: unknown
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
  } catch {
    throw new HttpError(400, 'bad-request', 'the request body is not JSON')
  }
  return asObject(body)
}

function asObject(body: unknown): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body) || Buffer.isBuffer(body)) {
    throw new HttpError(400, 'bad-request', 'the request body is not a JSON object')
  }
  return body as Record<string, unknown>
}
