/**
 * Keeps `docs/architecture.md` true to the tree: its folder tree of `packages/core/src` must name
 * every folder and `.ts` file there, name nothing that is not there, and label each entry with the
 * layer `CORE_LAYERS` (scripts/check-layers.ts) gives it; and every `folder/file.ts` of core the prose
 * cites must exist. Run by `scripts/test/architecture-doc.test.ts` (so by `pnpm test`), or alone:
 *
 * ```text
 * tsx scripts/architecture-doc.ts [root]    exit 1 listing what to add or remove, 0 otherwise
 * ```
 *
 * The tree is the ` ```text ` block whose first line is `packages/core/src/`. Each entry starts two
 * spaces in: a folder (`queue/`) followed by its files, or root files alone; a line indented further
 * continues the entry above. Files are items separated by ` · `, each a name (`.ts` may be left off)
 * and an optional gloss in parentheses. A layer name at the end of a line, after two spaces or more,
 * labels that entry and every entry below it, until the next label:
 *
 * ```text
 * packages/core/src/
 *   index.ts (the only barrel)                                   front
 *   queue/     run-queue.ts (what waits) · urgency ·              leaves
 *              level-queue.ts
 *   clock.ts · headers.ts
 * ```
 *
 * @module
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { CORE_LAYERS, type Layer, rankOf } from './check-layers.js'

/** The page, relative to the root. */
export const PAGE = 'docs/architecture.md'
const TREE_HEAD = 'packages/core/src/'

/** One entry of the tree: a folder (`queue/`) or root files (`''`), its items, its layer label. */
export interface TreeEntry {
  /** The folder with its trailing `/`, or `''` for root files. */
  readonly folder: string
  /** The items' names as written (`run-queue.ts`, `urgency`). */
  readonly names: readonly string[]
  /** The layer label in force, if any. */
  readonly layer: string | undefined
  /** 1-based line in the page. */
  readonly line: number
}

/** The tree's entries, and what could not be read. */
export interface ParsedTree {
  readonly entries: readonly TreeEntry[]
  readonly problems: readonly string[]
}

/** Reads the folder tree of `markdown`. */
export function parseTree(markdown: string, layers: readonly Layer[] = CORE_LAYERS): ParsedTree {
  const lines = markdown.split('\n')
  const start = lines.findIndex((l, i) => l.trim() === '```text' && lines[i + 1]?.trim() === TREE_HEAD)
  if (start < 0) return { entries: [], problems: [`${PAGE} has no \`\`\`text block starting with ${TREE_HEAD}`] }
  const label = new RegExp(`\\s{2,}(${layers.map((l) => l.name).join('|')})\\s*$`)
  const raw: { folder: string; text: string; layer: string | undefined; line: number }[] = []
  let layer: string | undefined
  for (let i = start + 2; i < lines.length && lines[i]?.trim() !== '```'; i++) {
    let text = lines[i] ?? ''
    if (text.trim() === '') continue
    const found = label.exec(text)
    if (found !== null) text = text.slice(0, found.index)
    const current = raw.at(-1)
    if (/^ {3,}/.test(text) && current !== undefined) {
      current.text += ` ${text.trim()}`
      if (found !== null) current.layer = layer = found[1]
      continue
    }
    if (found !== null) layer = found[1]
    const folder = /^ {2}([\w./-]+\/)(\s|$)/.exec(text)?.[1]
    raw.push({ folder: folder ?? '', text: text.trim().slice(folder?.length ?? 0), layer, line: i + 1 })
  }
  const problems: string[] = []
  const entries = raw.map((e) => ({ ...e, names: itemsOf(e.text, e.line, problems) }))
  return { entries, problems }
}

// The names of ` · `-separated items `name (gloss)`; an item that is not of that shape is a problem.
function itemsOf(text: string, line: number, problems: string[]): string[] {
  const items: string[] = []
  let depth = 0
  let item = ''
  for (const ch of `${text}·`) {
    if (ch === '(') depth++
    if (ch === ')') depth--
    if (ch !== '·' || depth > 0) {
      item += ch
      continue
    }
    const trimmed = item.trim()
    item = ''
    if (trimmed === '') continue
    const name = /^([\w.-]+)(\s*\(.*\))?$/s.exec(trimmed)?.[1]
    if (name === undefined) problems.push(`${PAGE}:${line}: cannot read \`${trimmed}\` as \`file.ts (what it is)\``)
    else items.push(name)
  }
  return items
}

/** The folders (with a trailing `/`) and `.ts` files of the tree at `src`, relative to it. */
export function listSource(src: string): { folders: string[]; files: string[] } {
  const folders: string[] = []
  const files: string[] = []
  const walk = (dir: string, prefix: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) {
        folders.push(`${prefix}${entry.name}/`)
        walk(join(dir, entry.name), `${prefix}${entry.name}/`)
      } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) files.push(`${prefix}${entry.name}`)
    }
  }
  walk(src, '')
  return { folders: folders.sort(), files: files.sort() }
}

/** Everything the page's tree gets wrong about `source`, each with what to add or remove. */
export function treeProblems(
  tree: ParsedTree,
  source: { folders: readonly string[]; files: readonly string[] },
  layers: readonly Layer[] = CORE_LAYERS,
): string[] {
  const out = [...tree.problems]
  const named = new Set<string>()
  const listed = new Set<string>()
  const layerOf = (path: string) => layers[rankOf(path, layers)]?.name ?? '(no layer: add it to CORE_LAYERS)'
  for (const e of tree.entries) {
    const at = `${PAGE}:${e.line}`
    if (e.folder !== '') {
      if (listed.has(e.folder)) out.push(`${at}: \`${e.folder}\` has a second entry: merge it into the first`)
      listed.add(e.folder)
      if (!source.folders.includes(e.folder)) {
        out.push(`${at}: names the folder \`${e.folder}\`, which ${TREE_HEAD} does not have: remove its entry`)
        continue
      }
      checkLayer(out, at, `\`${e.folder}\``, e.layer, layerOf(e.folder))
    }
    for (const name of e.names) {
      const file = `${e.folder}${name.endsWith('.ts') ? name : `${name}.ts`}`
      named.add(file)
      const where = e.folder === '' ? 'its line' : `the \`${e.folder}\` entry`
      if (!source.files.includes(file))
        out.push(`${at}: names \`${file}\`, which does not exist: remove it from ${where}`)
      else if (e.folder === '') checkLayer(out, at, `\`${file}\``, e.layer, layerOf(file))
    }
  }
  for (const folder of source.folders) {
    if (listed.has(folder)) continue
    const files = source.files.filter((f) => f.startsWith(folder) && !f.slice(folder.length).includes('/'))
    const items = files.map((f) => f.slice(folder.length)).join(' · ')
    out.push(
      `${PAGE}: \`${folder}\` is not in the tree: add \`  ${folder}  ${items}\` under the label \`${layerOf(folder)}\``,
    )
    for (const f of files) named.add(f)
  }
  for (const file of source.files) {
    if (named.has(file)) continue
    const folder = file.includes('/') ? file.slice(0, file.lastIndexOf('/') + 1) : ''
    const base = file.slice(folder.length)
    const where = folder === '' ? `a root line under the label \`${layerOf(file)}\`` : `the \`${folder}\` entry`
    out.push(`${PAGE}: \`${file}\` is not named in the tree: add \`${base} (what it is)\` to ${where}`)
  }
  return out
}

function checkLayer(out: string[], at: string, what: string, label: string | undefined, layer: string): void {
  if (label === layer) return
  const now = label === undefined ? 'has no layer label above it' : `is under the label \`${label}\``
  out.push(`${at}: ${what} ${now}, but CORE_LAYERS (scripts/check-layers.ts) puts it in \`${layer}\`: move it there`)
}

/** Each `folder/file.ts` of core that `markdown` cites in code type and that does not exist. */
export function staleCitations(markdown: string, source: { folders: readonly string[]; files: readonly string[] }) {
  const out: string[] = []
  const lines = markdown.split('\n')
  lines.forEach((text, i) => {
    for (const m of text.matchAll(/`([\w-]+\/[\w./-]*?[\w-]+\.ts)`/g)) {
      const path = m[1] ?? ''
      const first = `${path.split('/')[0]}/`
      if (source.folders.includes(first) || rankOf(first) >= 0) {
        if (!source.files.includes(path)) out.push(`line ${i + 1}: cites \`${path}\`, which ${TREE_HEAD} does not have`)
      }
    }
  })
  return out
}

/** Checks the page at `root` against its tree; returns every problem. */
export function checkPage(root: string): string[] {
  const source = listSource(join(root, TREE_HEAD))
  const page = readFileSync(join(root, PAGE), 'utf8')
  return [...treeProblems(parseTree(page), source), ...staleCitations(page, source).map((p) => `${PAGE} ${p}`)]
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..'))
  const problems = existsSync(join(root, PAGE)) ? checkPage(root) : [`no ${PAGE} under ${root}`]
  for (const p of problems) console.error(p)
  process.exitCode = problems.length === 0 ? 0 : 1
}
