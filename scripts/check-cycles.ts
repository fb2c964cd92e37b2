/**
 * Import cycles among `packages/*\/src` files — `import type` included, since a cycle of contracts is
 * still a cycle (STYLE.md: contracts are leaves). Run by `pnpm test` as `pnpm run check:cycles`:
 *
 * ```text
 * tsx scripts/check-cycles.ts [root]      exit 1 listing each cycle, 0 when there is none
 * FLOWING_CYCLES_WARN=1 tsx scripts/…     lists them and exits 0 (while known cycles are being fixed)
 * ```
 *
 * Every edge the TypeScript parser sees counts: `import` / `import type` / `export … from` /
 * `import x = require()` / `import()` calls / `import('…')` types. A relative specifier resolves to
 * the `.ts` file it names (`./a.js` → `a.ts`, a folder → its `index.ts`); `@flowing/<name>` resolves to
 * `packages/<name>/src/index.ts`, so a cycle across packages is found too. Anything else is external.
 *
 * A cycle is reported per strongly connected component (Tarjan): one closed path from its first file
 * through every file of the component, `─type→` marking an edge made of type-only imports.
 *
 * @module
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

/** One import edge: from a file to the file it imports, and whether only types cross it. */
export interface Edge {
  readonly to: string
  readonly typeOnly: boolean
}

/** A cycle: the files of one strongly connected component, and a closed path through all of them. */
export interface Cycle {
  /** The component's files, sorted. */
  readonly files: readonly string[]
  /** A closed path from `files[0]` through every file back to it (first and last are equal). */
  readonly path: readonly string[]
  /** For each step of `path`, whether that edge carries only types. */
  readonly typeOnly: readonly boolean[]
}

/** The `.ts` source files (not `.d.ts`) under `packages/*\/src` of `root`, as absolute paths. */
export function sourceFiles(root: string): string[] {
  const packages = join(root, 'packages')
  if (!existsSync(packages)) return []
  const out: string[] = []
  for (const name of readdirSync(packages).sort()) {
    const src = join(packages, name, 'src')
    if (existsSync(src) && statSync(src).isDirectory()) walk(src, out)
  }
  return out
}

function walk(dir: string, out: string[]): void {
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) walk(path, out)
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(path)
  }
}

/** Every module specifier of `text`, with whether its import brings in types only. */
export function specifiers(
  fileName: string,
  text: string,
): { readonly specifier: string; readonly typeOnly: boolean }[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS)
  const found: { specifier: string; typeOnly: boolean }[] = []
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: importIsTypeOnly(node.importClause) })
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.exportClause
      const allTypes =
        clause !== undefined && ts.isNamedExports(clause) && clause.elements.length > 0
          ? clause.elements.every((e) => e.isTypeOnly)
          : false
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: node.isTypeOnly || allTypes })
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference) &&
      ts.isStringLiteral(node.moduleReference.expression)
    ) {
      found.push({ specifier: node.moduleReference.expression.text, typeOnly: node.isTypeOnly })
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      found.push({ specifier: node.arguments[0].text, typeOnly: false })
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      found.push({ specifier: node.argument.literal.text, typeOnly: true })
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

// `import type { A }`, or `import { type A, type B }` (no value binding, so nothing runs at import).
function importIsTypeOnly(clause: ts.ImportClause | undefined): boolean {
  if (clause === undefined) return false // `import './side-effect.js'`
  if (clause.isTypeOnly) return true
  const bindings = clause.namedBindings
  return (
    clause.name === undefined &&
    bindings !== undefined &&
    ts.isNamedImports(bindings) &&
    bindings.elements.length > 0 &&
    bindings.elements.every((e) => e.isTypeOnly)
  )
}

/** The source file `specifier` names from `from`, or `undefined` when it is outside `packages/*\/src`. */
export function resolveSpecifier(root: string, from: string, specifier: string): string | undefined {
  let base: string
  if (specifier.startsWith('.')) base = resolve(dirname(from), specifier)
  else {
    const match = /^@flowing\/([^/]+)$/.exec(specifier)
    if (match === null) return undefined
    base = join(root, 'packages', match[1] as string, 'src', 'index')
  }
  const stem = base.replace(/\.(?:[cm]?js|tsx?)$/, '')
  for (const candidate of [`${stem}.ts`, join(base, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate
  }
  return undefined
}

/** The import graph of `files`: each file's edges to other files of the set (type-only when every import is). */
export function importGraph(root: string, files: readonly string[]): Map<string, Edge[]> {
  const known = new Set(files)
  const graph = new Map<string, Edge[]>()
  for (const file of files) {
    const edges = new Map<string, boolean>()
    for (const { specifier, typeOnly } of specifiers(file, readFileSync(file, 'utf8'))) {
      const to = resolveSpecifier(root, file, specifier)
      if (to === undefined || !known.has(to)) continue
      edges.set(to, (edges.get(to) ?? true) && typeOnly)
    }
    graph.set(
      file,
      [...edges].map(([to, typeOnly]) => ({ to, typeOnly })),
    )
  }
  return graph
}

/** Strongly connected components with a cycle (two files or more, or a file importing itself), Tarjan's. */
export function cyclicComponents(graph: ReadonlyMap<string, readonly Edge[]>): string[][] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const onStack = new Set<string>()
  const stack: string[] = []
  const out: string[][] = []
  let counter = 0
  const connect = (v: string): void => {
    index.set(v, counter)
    low.set(v, counter++)
    stack.push(v)
    onStack.add(v)
    for (const { to } of graph.get(v) ?? []) {
      if (!index.has(to)) {
        connect(to)
        low.set(v, Math.min(low.get(v) as number, low.get(to) as number))
      } else if (onStack.has(to)) low.set(v, Math.min(low.get(v) as number, index.get(to) as number))
    }
    if (low.get(v) !== index.get(v)) return
    const component: string[] = []
    let w: string
    do {
      w = stack.pop() as string
      onStack.delete(w)
      component.push(w)
    } while (w !== v)
    const selfLoop = (graph.get(v) ?? []).some((e) => e.to === v)
    if (component.length > 1 || selfLoop) out.push(component.sort())
  }
  for (const v of graph.keys()) if (!index.has(v)) connect(v)
  return out.sort((a, b) => (a[0] as string).localeCompare(b[0] as string))
}

// The shortest path from `from` to `to` (which may be `from`: the way back) inside `inside`, by BFS,
// as the files after `from`.
function shortestPath(
  graph: ReadonlyMap<string, readonly Edge[]>,
  inside: ReadonlySet<string>,
  from: string,
  to: string,
): string[] {
  const previous = new Map<string, string>()
  const queue = [from]
  for (let head = 0; head < queue.length; head++) {
    const v = queue[head] as string
    for (const { to: next } of graph.get(v) ?? []) {
      if (!inside.has(next) || previous.has(next) || (next === from && to !== from)) continue
      previous.set(next, v)
      if (next === to) {
        const path = [to]
        for (let at = v; at !== from; at = previous.get(at) as string) path.unshift(at)
        return path
      }
      queue.push(next)
    }
  }
  return [] // unreachable inside a strongly connected component
}

/** Every cycle of the graph, one per component, each a closed path through all of its files. */
export function findCycles(graph: ReadonlyMap<string, readonly Edge[]>): Cycle[] {
  return cyclicComponents(graph).map((files) => {
    const inside = new Set(files)
    const start = files[0] as string
    const path = [start]
    const unvisited = new Set(files.slice(1))
    let at = start
    while (unvisited.size > 0) {
      const target = [...unvisited][0] as string
      for (const v of shortestPath(graph, inside, at, target)) {
        path.push(v)
        unvisited.delete(v)
      }
      at = target
    }
    path.push(...shortestPath(graph, inside, at, start))
    const typeOnly = path.slice(1).map((to, i) => {
      const edge = (graph.get(path[i] as string) ?? []).find((e) => e.to === to)
      return edge?.typeOnly ?? false
    })
    return { files, path, typeOnly }
  })
}

/** Renders a cycle relative to `root`: `a.ts → b.ts ─type→ a.ts`. */
export function formatCycle(root: string, cycle: Cycle): string {
  let line = relative(root, cycle.path[0] as string)
  cycle.path.slice(1).forEach((file, i) => {
    line += `${cycle.typeOnly[i] ? ' ─type→ ' : ' → '}${relative(root, file)}`
  })
  return line
}

/** Checks `root`; prints each cycle; returns the exit code (0 with `warnOnly`, or when there is none). */
export function main(root: string, warnOnly: boolean, log: (line: string) => void = console.error): number {
  const cycles = findCycles(importGraph(root, sourceFiles(root)))
  if (cycles.length === 0) return 0
  log(`${cycles.length} import cycle${cycles.length === 1 ? '' : 's'} among packages/*/src:`)
  for (const cycle of cycles) log(`  ${formatCycle(root, cycle)}`)
  if (warnOnly) {
    log('FLOWING_CYCLES_WARN=1: reported only, not failing')
    return 0
  }
  log('Break each one (contracts are leaves: move the shared type into a file both sides import).')
  return 1
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..'))
  const { FLOWING_CYCLES_WARN: warnOnly } = process.env
  process.exitCode = main(root, warnOnly === '1')
}
