/**
 * The path of a request as the client sent it, checked before anything is routed: the dashboard
 * matches its base path on the raw path (not on a normalized one, which `/x/%2e%2e/flowing/…` would
 * turn into the dashboard's path behind an app's path-based authentication), and refuses dot segments,
 * empty segments, backslashes and encoded dots or slashes under it.
 *
 * @module
 */
import { HttpError } from './respond.js'

/** A request's raw path and its query. */
export interface RequestPath {
  readonly pathname: string
  readonly searchParams: URLSearchParams
  /** The query as sent, `?` included (or `''`). */
  readonly search: string
}

/** The raw path and query of `url` (a request's `req.url`). */
export function splitUrl(url: string | undefined): RequestPath {
  const raw = url ?? '/'
  const q = raw.indexOf('?')
  const pathname = q < 0 ? raw : raw.slice(0, q)
  const search = q < 0 ? '' : raw.slice(q)
  return { pathname, search, searchParams: new URLSearchParams(search) }
}

// Under the base path: no `.` or `..` segment, no `//`, no `\`, no encoded `.`, `/` or `\`.
const UNSAFE = /(^|\/)\.{1,2}(\/|$)|\/\/|\\|%2e|%2f|%5c/i

/**
 * @throws HttpError 400 when the path under the base could be read as another path
 */
export function checkPath(pathname: string): void {
  if (UNSAFE.test(pathname) || pathname.length > 2048) {
    throw new HttpError(400, 'bad-request', 'the path has dot segments, empty segments or encoded separators')
  }
}

/** `decodeURIComponent`, a malformed escape answered 400. */
export function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment)
  } catch {
    throw new HttpError(400, 'bad-request', 'the path has a malformed escape')
  }
}
