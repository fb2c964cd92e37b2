/**
 * Keeps `docs/design/message-lifecycle.md` true to the code: every place a message can be (a member of
 * core's `Where` enum), every holder (an exported function returning a `Holder`, or a class
 * implementing one, or a constant typed as one) and every `Outcome` has a row in the note's table for it — the `where`, `holder` and
 * `outcome` tables, named by their first header cell — and no row names one that is gone. Run by
 * `scripts/test/lifecycle-doc.test.ts`, or alone:
 *
 * ```text
 * tsx scripts/lifecycle-doc.ts [root]    exit 1 listing each row to add or remove, 0 otherwise
 * ```
 *
 * The names are read from the source with the TypeScript parser wherever they are declared in
 * `packages/core/src`, so moving a declaration to another file does not break the check.
 *
 * @module
 */
import { readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { sourceFiles } from './check-cycles.js'

/** The note, relative to the root. */
export const NOTE = 'docs/design/message-lifecycle.md'

/** One kind of name the note must list: its table's first header cell, and the names in the code. */
export interface Kind {
  /** The table's first header cell, without code marks: `where`, `holder`, `outcome`. */
  readonly table: string
  /** How a row's first cell writes a name (`Where.Ready`, `queueHolder`, `succeeded`). */
  readonly names: readonly string[]
  /** Where they are declared (for the messages). */
  readonly from: string
}

/** The `Where` members, holders and outcomes declared in `files` (path → text), or why not. */
export function lifecycleNames(files: ReadonlyMap<string, string>): { kinds: Kind[]; problems: string[] } {
  const found = { where: [] as string[], holder: [] as string[], outcome: [] as string[] }
  const from = { where: '', holder: new Set<string>(), outcome: '' }
  for (const [path, text] of files) {
    const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true)
    const visit = (node: ts.Node): void => {
      if (ts.isEnumDeclaration(node) && node.name.text === 'Where') {
        found.where.push(...node.members.map((m) => `Where.${m.name.getText(source)}`))
        from.where = path
      } else if (ts.isTypeAliasDeclaration(node) && node.name.text === 'Outcome' && ts.isUnionTypeNode(node.type)) {
        for (const t of node.type.types) {
          if (ts.isLiteralTypeNode(t) && ts.isStringLiteral(t.literal)) found.outcome.push(t.literal.text)
        }
        from.outcome = path
      } else {
        const holder = holderName(node, source)
        if (holder !== undefined) {
          found.holder.push(holder)
          from.holder.add(path)
        }
      }
      ts.forEachChild(node, visit)
    }
    visit(source)
  }
  const problems: string[] = []
  const where = 'packages/core/src: teach scripts/lifecycle-doc.ts where it is declared now'
  if (found.where.length === 0) problems.push(`found no \`enum Where\` in ${where}`)
  if (found.holder.length === 0) problems.push(`found no holder (a function returning \`Holder\`) in ${where}`)
  if (found.outcome.length === 0) problems.push(`found no \`type Outcome = 'a' | …\` in ${where}`)
  const kinds: Kind[] = [
    { table: 'where', names: found.where, from: from.where },
    { table: 'holder', names: found.holder, from: [...from.holder].join(', ') },
    { table: 'outcome', names: found.outcome, from: from.outcome },
  ]
  return { kinds, problems }
}

// A holder's name: an exported function returning `Holder`, a class implementing it, a constant typed
// as one. A private helper that builds holders (keyKeepingHolder) is not one itself.
function holderName(node: ts.Node, source: ts.SourceFile): string | undefined {
  if (ts.isFunctionDeclaration(node)) {
    const exported = node.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) === true
    return exported && node.type?.getText(source) === 'Holder' ? node.name?.text : undefined
  }
  if (ts.isClassDeclaration(node)) {
    const implemented = node.heritageClauses?.flatMap((c) => c.types.map((t) => t.expression.getText(source)))
    return (implemented ?? []).includes('Holder') ? node.name?.text : undefined
  }
  if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.type?.getText(source) === 'Holder') {
    return node.name.text
  }
  return undefined
}

/** A markdown table: its header cells and its rows' cells (code marks kept), with 1-based lines. */
export interface Table {
  readonly header: readonly string[]
  readonly rows: readonly { readonly cells: readonly string[]; readonly line: number }[]
}

/** Every table of `markdown`. */
export function tablesOf(markdown: string): Table[] {
  const tables: { header: string[]; rows: { cells: string[]; line: number }[] }[] = []
  const lines = markdown.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? ''
    if (!line.startsWith('|')) continue
    if (/^\|[-:| ]+\|$/.test(lines[i + 1] ?? '') && !(lines[i - 1] ?? '').startsWith('|')) {
      tables.push({ header: cellsOf(line), rows: [] })
      i++
    } else tables.at(-1)?.rows.push({ cells: cellsOf(line), line: i + 1 })
  }
  return tables
}

// A row's cells, trimmed (a `|` inside code marks does not split).
function cellsOf(line: string): string[] {
  const cells: string[] = []
  let cell = ''
  let code = false
  for (const ch of line.slice(1, line.endsWith('|') ? -1 : undefined)) {
    if (ch === '`') code = !code
    if (ch === '|' && !code) {
      cells.push(cell.trim())
      cell = ''
    } else cell += ch
  }
  cells.push(cell.trim())
  return cells
}

/** What the note gets wrong about `kinds`: a row to add or to remove, a table missing, a cell empty. */
export function noteProblems(markdown: string, kinds: readonly Kind[]): string[] {
  const out: string[] = []
  const tables = tablesOf(markdown)
  for (const kind of kinds) {
    const table = tables.find((t) => t.header[0]?.replace(/`/g, '') === kind.table)
    if (table === undefined) {
      out.push(`${NOTE} has no table whose first column is \`${kind.table}\`: add one listing ${kind.names.join(', ')}`)
      continue
    }
    const listed = new Set<string>()
    for (const row of table.rows) {
      const name = /^`([^`]+)`$/.exec(row.cells[0] ?? '')?.[1]
      if (name === undefined || !kind.names.includes(name)) {
        out.push(
          `${NOTE}:${row.line}: the ${kind.table} table lists ${row.cells[0]}, not in ${kind.from}: remove its row`,
        )
        continue
      }
      listed.add(name)
      const empty = table.header.filter((_, i) => (row.cells[i] ?? '') === '')
      if (empty.length > 0) out.push(`${NOTE}:${row.line}: \`${name}\` has no ${empty.join(', ')}: fill it in`)
    }
    for (const name of kind.names) {
      if (!listed.has(name)) {
        out.push(
          `${NOTE}: \`${name}\` (${kind.from}) has no row in the ${kind.table} table: add one (${table.header.join(' | ')})`,
        )
      }
    }
  }
  return out
}

/** Checks the note at `root` against core's source; returns every problem. */
export function checkNote(root: string): string[] {
  const core = join(root, 'packages', 'core', 'src')
  const files = new Map(
    sourceFiles(root)
      .filter((f) => f.startsWith(`${core}/`))
      .map((f) => [relative(core, f), readFileSync(f, 'utf8')] as const),
  )
  const { kinds, problems } = lifecycleNames(files)
  return [...problems, ...noteProblems(readFileSync(join(root, NOTE), 'utf8'), kinds)]
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const problems = checkNote(resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..')))
  for (const p of problems) console.error(p)
  process.exitCode = problems.length === 0 ? 0 : 1
}
