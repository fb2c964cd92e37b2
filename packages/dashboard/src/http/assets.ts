/**
 * The page and its assets, served from the package itself — no CDN: the dashboard works offline and
 * behind a firewall. Read and gzipped once, at the first request for each.
 *
 * @module
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'

/** One served file, with its gzip. */
export interface Asset {
  readonly type: string
  readonly body: Buffer
  readonly zipped: Buffer
}

const require = createRequire(import.meta.url)
// `assets/` beside `src/` and `dist/`: two levels above this file either way.
const own = (name: string) => fileURLToPath(new URL(`../../assets/${name}`, import.meta.url))

const SCRIPT = 'text/javascript; charset=utf-8'
// The page's modules: app.js imports the others.
const MODULES = ['app', 'state', 'dom', 'server', 'navigation', 'overview', 'views', 'letters', 'timeline']

const FILES: Record<string, { path: () => string; type: string }> = {
  'index.html': { path: () => own('index.html'), type: 'text/html; charset=utf-8' },
  ...Object.fromEntries(MODULES.map((m) => [`${m}.js`, { path: () => own(`${m}.js`), type: SCRIPT }])),
  'app.css': { path: () => own('app.css'), type: 'text/css; charset=utf-8' },
  'uplot.js': { path: () => require.resolve('uplot/dist/uPlot.iife.min.js'), type: SCRIPT },
  'uplot.css': { path: () => require.resolve('uplot/dist/uPlot.min.css'), type: 'text/css; charset=utf-8' },
}

const cache = new Map<string, Asset>()

/** The asset `name`, or `undefined` when there is none of that name. */
export function asset(name: string): Asset | undefined {
  if (!Object.hasOwn(FILES, name)) return undefined
  let found = cache.get(name)
  if (found === undefined) {
    const file = FILES[name] as { path: () => string; type: string }
    const body = readFileSync(file.path())
    found = { type: file.type, body, zipped: gzipSync(body, { level: 9 }) }
    cache.set(name, found)
  }
  return found
}

/** Every asset's name (the page weight check reads them all). */
export const ASSET_NAMES: readonly string[] = Object.keys(FILES)
