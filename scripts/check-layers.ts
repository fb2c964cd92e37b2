/**
 * The layers of `@flowing/core`, lowest first, and the one rule between them: a file imports only
 * from its own layer or a lower one (`import type` included — a contract that names an implementation
 * is not a leaf). Run by `pnpm test` inside `pnpm run check:cycles`:
 *
 * ```text
 *  front      loop/ · index.ts           the public Loop and createLoop()
 *  engine     engine/                    the composition root: builds the stages, binds their ports
 *  stages     admission/ … shutdown/     each owns its state; stages talk through ports
 *  leaves     queue/ · timers/ · …       data structures and helpers with no loop in them
 *  contracts  contracts/ · errors.ts      types and constants only (options, events, store, snapshot), the errors
 * ```
 *
 * ```text
 * tsx scripts/check-layers.ts [root]     exit 1 listing each upward import or unplaced file, 0 otherwise
 * ```
 *
 * @module
 */
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { importGraph, sourceFiles } from './check-cycles.js'

/** One layer: its name and the paths (relative to `packages/core/src`) it holds; a `/` ends a folder. */
export interface Layer {
  readonly name: string
  readonly paths: readonly string[]
}

/** Core's layers, lowest first. Every file of `packages/core/src` belongs to exactly one. */
export const CORE_LAYERS: readonly Layer[] = [
  // The error catalogue sits with the contracts: its classes are what callers catch and match by `code`,
  // and it imports nothing of core.
  { name: 'contracts', paths: ['contracts/', 'errors.ts'] },
  {
    name: 'leaves',
    paths: ['clock.ts', 'headers.ts', 'internal/', 'metrics/', 'queue/', 'idempotency/', 'timers/'],
  },
  {
    name: 'stages',
    paths: [
      'admission/',
      'dispatcher/',
      'failure/',
      'limits/',
      'pool/',
      'journal/',
      'shutdown/',
      'options/',
      'outcomes/',
      'lifecycle/',
      'requests/',
      'jobs/',
    ],
  },
  { name: 'engine', paths: ['engine/'] },
  { name: 'front', paths: ['loop/', 'index.ts'] },
]

/** The rank (index in `layers`) of a path relative to the package's `src`, or -1 when no layer holds it. */
export function rankOf(path: string, layers: readonly Layer[] = CORE_LAYERS): number {
  return layers.findIndex((layer) => layer.paths.some((p) => (p.endsWith('/') ? path.startsWith(p) : path === p)))
}

/** A broken rule: an import from a lower layer up to a higher one, or a file no layer holds. */
export interface LayerViolation {
  readonly from: string
  readonly to?: string
  readonly why: string
}

/** The violations of `layers` among the files of `packages/core/src` under `root`. */
export function layerViolations(root: string, layers: readonly Layer[] = CORE_LAYERS): LayerViolation[] {
  const src = join(root, 'packages', 'core', 'src')
  const inCore = (file: string) => file.startsWith(`${src}/`)
  const files = sourceFiles(root).filter(inCore)
  const out: LayerViolation[] = []
  for (const [file, edges] of importGraph(root, files)) {
    const from = relative(src, file)
    const rank = rankOf(from, layers)
    if (rank < 0) {
      out.push({ from, why: 'is in no layer: add its folder to CORE_LAYERS in scripts/check-layers.ts' })
      continue
    }
    for (const edge of edges) {
      const to = relative(src, edge.to)
      const target = rankOf(to, layers)
      if (target > rank) {
        const names = `${layers[rank]?.name} → ${layers[target]?.name}`
        out.push({ from, to, why: `imports upwards (${names})${edge.typeOnly ? ', types only' : ''}` })
      }
    }
  }
  return out.sort((a, b) => `${a.from} ${a.to}`.localeCompare(`${b.from} ${b.to}`))
}

/** Checks `root`; prints each violation; returns the exit code. */
export function main(root: string, log: (line: string) => void = console.error): number {
  const found = layerViolations(root)
  if (found.length === 0) return 0
  log(`${found.length} layer violation${found.length === 1 ? '' : 's'} in packages/core/src:`)
  for (const v of found) log(`  ${v.from}${v.to === undefined ? '' : ` → ${v.to}`}: ${v.why}`)
  log('Layers, lowest first: contracts < leaves < stages < engine < front (scripts/check-layers.ts).')
  return 1
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..'))
  process.exitCode = main(root)
}
