/**
 * The size rules of the source tree (STYLE.md): no file under `packages/*\/src` over 450 lines (the
 * error catalogues, `errors.ts`, aside) and no function over 60 lines. Run by `pnpm test` as
 * `pnpm run check:shape`:
 *
 * ```text
 * tsx scripts/check-shape.ts [root]      exit 1 listing each file or function over its limit
 * ```
 *
 * A function is anything with a body the TypeScript parser calls function-like: declarations,
 * methods, accessors, constructors, arrows and function expressions; its length runs from its first
 * token to its closing brace.
 *
 * @module
 */
import { readFileSync } from 'node:fs'
import { basename, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { sourceFiles } from './check-cycles.js'

/** The limits. */
export const MAX_FILE_LINES = 450
/** The limit on one function's lines. */
export const MAX_FUNCTION_LINES = 60

/** One file or function over its limit. */
export interface Oversize {
  readonly file: string
  /** 1-based line where it starts. */
  readonly line: number
  readonly lines: number
  /** `file`, or the function's name (`(anonymous)` for an unnamed one). */
  readonly what: string
}

/** Everything over its limit in `files`. */
export function oversized(files: readonly string[]): Oversize[] {
  const out: Oversize[] = []
  for (const file of files) {
    const text = readFileSync(file, 'utf8')
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0)
    if (lines > MAX_FILE_LINES && basename(file) !== 'errors.ts') out.push({ file, line: 1, lines, what: 'file' })
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
    const visit = (node: ts.Node): void => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
        const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line
        const end = source.getLineAndCharacterOfPosition(node.getEnd()).line
        if (end - start + 1 > MAX_FUNCTION_LINES) {
          out.push({ file, line: start + 1, lines: end - start + 1, what: nameOf(node, source) })
        }
      }
      ts.forEachChild(node, visit)
    }
    visit(source)
  }
  return out
}

// A function's name, or the variable or property it is assigned to.
function nameOf(node: ts.Node, source: ts.SourceFile): string {
  const own = (node as { name?: ts.Node }).name
  if (own !== undefined) return own.getText(source)
  const parent = node.parent
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) {
    return parent.name.getText(source)
  }
  return '(anonymous)'
}

/** Checks the tree at `root`; returns the exit code. */
export function main(root: string, print: (line: string) => void = console.log): number {
  const found = oversized(sourceFiles(root))
  if (found.length === 0) return 0
  print(`${found.length} over the size rules (files ≤ ${MAX_FILE_LINES} lines, functions ≤ ${MAX_FUNCTION_LINES}):`)
  for (const o of found) {
    const limit = o.what === 'file' ? MAX_FILE_LINES : MAX_FUNCTION_LINES
    print(`  ${relative(root, o.file)}:${o.line} ${o.what} — ${o.lines} lines (limit ${limit})`)
  }
  print('Split it: one concept per file, small functions (STYLE.md).')
  return 1
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(resolve(process.argv[2] ?? '.'))
}
