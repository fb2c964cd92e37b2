/**
 * Cross-site request forgery protection on every action: the action must come from the dashboard's
 * own origin (the `Origin` header, or `Referer` without it, must name the request's host or an allowed
 * origin), carry a token in the `x-flowing-csrf` header that matches the browser's token cookie (an
 * HMAC of the cookie under a per-dashboard secret: another site can neither read nor forge it), and be
 * JSON (a plain HTML form cannot send it).
 *
 * @module
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { HttpError } from './respond.js'

/** The token cookie's name. */
export const COOKIE = 'flowing_csrf'
/** The header an action carries its token in. */
export const HEADER = 'x-flowing-csrf'

/** Issues and checks one dashboard's tokens. */
export class Csrf {
  readonly #secret: Buffer

  /**
   * @param secret - the HMAC key (the `secret` option: shared by the replicas of an app), or `undefined`
   *   for one drawn now
   * @param allowedOrigins - origins besides the request's host that may send actions
   */
  constructor(
    secret: string | undefined,
    readonly allowedOrigins: readonly string[],
  ) {
    this.#secret = secret === undefined ? randomBytes(32) : Buffer.from(secret)
  }

  /**
   * The token of this browser, setting its cookie when it has none. The cookie's path is `/`: a proxy
   * or a framework that mounts the dashboard under a prefix of its own still gets it back.
   */
  issue(req: IncomingMessage, res: ServerResponse): string {
    let seed = cookieOf(req)
    if (seed === undefined) {
      seed = randomBytes(24).toString('base64url')
      const secure = isHttps(req) ? '; Secure' : ''
      const cookie = `${COOKIE}=${seed}; Path=/; HttpOnly; SameSite=Strict${secure}`
      const set = res.getHeader('set-cookie')
      res.setHeader('set-cookie', set === undefined ? cookie : [...(Array.isArray(set) ? set : [String(set)]), cookie])
    }
    return this.#token(seed)
  }

  /** @throws HttpError 403 (`csrf`) unless `req` is a same-origin JSON action with the right token */
  check(req: IncomingMessage): void {
    const origin = originOf(req)
    if (origin === undefined) throw new HttpError(403, 'csrf', 'an action needs an Origin or Referer header')
    if (!this.#sameOrigin(req, origin)) throw new HttpError(403, 'csrf', `actions from ${origin} are not allowed`)
    const type = req.headers['content-type'] ?? ''
    if (!/^application\/json\b/i.test(type)) throw new HttpError(415, 'csrf', 'an action must be sent as JSON')
    const seed = cookieOf(req)
    const token = req.headers[HEADER]
    if (seed === undefined || typeof token !== 'string' || !same(token, this.#token(seed))) {
      throw new HttpError(403, 'csrf', 'the CSRF token is missing or wrong: reload the page')
    }
  }

  #token(seed: string): string {
    return createHmac('sha256', this.#secret).update(seed).digest('base64url')
  }

  #sameOrigin(req: IncomingMessage, origin: string): boolean {
    if (this.allowedOrigins.includes(origin)) return true
    const host = req.headers.host?.toLowerCase()
    try {
      return host !== undefined && new URL(origin).host === host
    } catch {
      return false
    }
  }
}

// Over TLS, here or at a proxy in front that says so.
function isHttps(req: IncomingMessage): boolean {
  if ((req.socket as { encrypted?: boolean }).encrypted === true) return true
  const forwarded = req.headers['x-forwarded-proto']
  return typeof forwarded === 'string' && forwarded.split(',')[0]?.trim() === 'https'
}

// The origin an action comes from; `undefined` without one, or for `Origin: null` (a sandboxed frame,
// a privacy redirect: nobody the dashboard can trust).
function originOf(req: IncomingMessage): string | undefined {
  const origin = req.headers.origin
  if (origin === 'null') return undefined
  if (typeof origin === 'string') return origin.toLowerCase()
  const referer = req.headers.referer
  if (typeof referer !== 'string') return undefined
  try {
    return new URL(referer).origin.toLowerCase()
  } catch {
    return undefined
  }
}

function cookieOf(req: IncomingMessage): string | undefined {
  const header = req.headers.cookie
  if (header === undefined) return undefined
  for (const part of header.split(';')) {
    const [name, value] = part.trim().split('=', 2)
    if (name === COOKIE && value !== undefined && /^[A-Za-z0-9_-]{16,64}$/.test(value)) return value
  }
  return undefined
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}
