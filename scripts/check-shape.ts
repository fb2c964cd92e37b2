/**
 * The size rules of the source tree (STYLE.md): no file under `packages/*\/src` over 300 lines (the
 * error catalogues, `errors.ts`, aside) and no function over 40 lines. The files and functions that
 * broke the rule when it was adopted are recorded with their sizes in `scripts/shape-baseline.json`,
 * and that list may only shrink. Run by `pnpm test` as `pnpm run check:shape`:
 *
 * ```text
 * tsx scripts/check-shape.ts [root]            exit 1 when a file or function breaks the rule, 0 otherwise
 * tsx scripts/check-shape.ts [root] --update   rewrite the baseline from the tree (every exception at its size)
 * ```
 *
 * The check fails on a file or function over its limit that the baseline does not list (`new`), on a
 * listed one that grew past its recorded size (`grew`) — split it instead — and on a listed one that
 * shrank or is gone or within its limit now (`shrank`, `gone`): run `--update` so the baseline records
 * the smaller size and cannot grow back. `--update` prints what it recorded above the old baseline, so
 * a review sees every exception added.
 *
 * A function is anything with a body the TypeScript parser calls function-like: declarations,
 * methods, accessors, constructors, arrows and function expressions; its length runs from its first
 * token to its closing brace. It is named by its path of enclosing classes and functions
 * (`Admission.post`, `newPool.(anonymous)`), with `#2`, `#3` … for a repeated name in one file.
 *
 * @module
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { sourceFiles } from './check-cycles.js'

/** The limit on one file's lines (STYLE.md: "files under ~300 lines"). */
export const MAX_FILE_LINES = 300
/** The limit on one function's lines (STYLE.md: "functions under ~40"). */
export const MAX_FUNCTION_LINES = 40
/** Where the baseline lives, relative to the root. */
export const BASELINE_PATH = join('scripts', 'shape-baseline.json')

/** One file or function over its limit. */
export interface Oversize {
  /** The file, relative to the root, with `/` separators. */
  readonly file: string
  /** 1-based line where it starts. */
  readonly line: number
  readonly lines: number
  /** `file`, or the function's qualified name (`Class.method`, `outer.(anonymous)`). */
  readonly what: string
}

/** The recorded exceptions: file → lines, and `file › function` → lines. */
export interface Baseline {
  readonly files: Record<string, number>
  readonly functions: Record<string, number>
}

/** The baseline key of an oversize file or function. */
export const keyOf = (o: Oversize): string => (o.what === 'file' ? o.file : `${o.file} › ${o.what}`)

const limitOf = (o: Oversize): number => (o.what === 'file' ? MAX_FILE_LINES : MAX_FUNCTION_LINES)

/** Everything over its limit in `files` (absolute paths), named relative to `root`. */
export function oversized(root: string, files: readonly string[]): Oversize[] {
  const out: Oversize[] = []
  for (const path of files) {
    const file = relative(root, path).split(sep).join('/')
    const text = readFileSync(path, 'utf8')
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0)
    if (lines > MAX_FILE_LINES && basename(file) !== 'errors.ts') out.push({ file, line: 1, lines, what: 'file' })
    for (const fn of functionsOf(path, text)) {
      if (fn.lines > MAX_FUNCTION_LINES) out.push({ file, ...fn })
    }
  }
  return out
}

// Every function of a file with its start line, length and qualified name (repeats numbered).
function functionsOf(path: string, text: string): { line: number; lines: number; what: string }[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true)
  const found: { line: number; lines: number; what: string }[] = []
  const seen = new Map<string, number>()
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line
      const name = qualifiedName(node, source)
      const n = (seen.get(name) ?? 0) + 1
      seen.set(name, n)
      found.push({ line: start + 1, lines: end - start + 1, what: n === 1 ? name : `${name}#${n}` })
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

// The names of the classes and functions enclosing `node`, outermost first, and its own.
function qualifiedName(node: ts.Node, source: ts.SourceFile): string {
  const names: string[] = []
  for (let at: ts.Node | undefined = node; at !== undefined && !ts.isSourceFile(at); at = at.parent) {
    if (ts.isFunctionLike(at) || ts.isClassLike(at)) names.unshift(nameOf(at, source))
  }
  return names.join('.')
}

// A function's or class's name, or the variable or property it is assigned to.
function nameOf(node: ts.Node, source: ts.SourceFile): string {
  if (ts.isConstructorDeclaration(node)) return 'constructor'
  const own = (node as { name?: ts.Node }).name
  if (own !== undefined) return own.getText(source)
  const parent = node.parent
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) {
    return parent.name.getText(source)
  }
  return '(anonymous)'
}

/** One broken rule, as the check reports it. */
export interface Finding {
  readonly kind: 'new' | 'grew' | 'shrank' | 'gone'
  readonly key: string
  readonly text: string
}

/** What `found` breaks against `baseline`: new and grown exceptions, and entries to tighten. */
export function compare(found: readonly Oversize[], baseline: Baseline): Finding[] {
  const out: Finding[] = []
  const recorded = new Map([...Object.entries(baseline.files), ...Object.entries(baseline.functions)])
  for (const o of found) {
    const key = keyOf(o)
    const was = recorded.get(key)
    recorded.delete(key)
    const where = `${o.file}:${o.line} ${o.what} — ${o.lines} lines (limit ${limitOf(o)}`
    if (was === undefined) out.push({ kind: 'new', key, text: `${where}): split it` })
    else if (o.lines > was) out.push({ kind: 'grew', key, text: `${where}, recorded ${was}): split it` })
    else if (o.lines < was) out.push({ kind: 'shrank', key, text: `${where}, recorded ${was}): tighten the baseline` })
  }
  for (const [key, was] of recorded) {
    out.push({
      kind: 'gone',
      key,
      text: `${key} — within its limit or removed (recorded ${was}): drop it from the baseline`,
    })
  }
  return out
}

/** The baseline at `root` (empty when there is none). */
export function readBaseline(root: string): Baseline {
  const path = join(root, BASELINE_PATH)
  if (!existsSync(path)) return { files: {}, functions: {} }
  const data = JSON.parse(readFileSync(path, 'utf8')) as Partial<Baseline>
  return { files: data.files ?? {}, functions: data.functions ?? {} }
}

/** The baseline that records exactly `found`, keys sorted. */
export function baselineOf(found: readonly Oversize[]): Baseline {
  const sorted = [...found].sort((a, b) => keyOf(a).localeCompare(keyOf(b)))
  const files: Record<string, number> = {}
  const functions: Record<string, number> = {}
  for (const o of sorted) (o.what === 'file' ? files : functions)[keyOf(o)] = o.lines
  return { files, functions }
}

const UPDATE = 'npx tsx scripts/check-shape.ts --update'

/** Checks the tree at `root` (or, with `update`, rewrites its baseline); returns the exit code. */
export function main(root: string, print: (line: string) => void = console.log, update = false): number {
  const found = oversized(root, sourceFiles(root))
  const findings = compare(found, readBaseline(root))
  if (update) return writeBaseline(root, found, findings, print)
  if (findings.length === 0) return 0
  print(
    `${findings.length} against the size rules (files ≤ ${MAX_FILE_LINES} lines, functions ≤ ${MAX_FUNCTION_LINES}; ` +
      `the exceptions of ${BASELINE_PATH} may only shrink):`,
  )
  for (const f of findings) print(`  ${f.kind.padEnd(6)} ${f.text}`)
  if (findings.some((f) => f.kind === 'new' || f.kind === 'grew')) {
    print('Split it: one concept per file, small functions (STYLE.md).')
  }
  if (findings.some((f) => f.kind === 'shrank' || f.kind === 'gone')) {
    print(`Smaller than recorded: run \`${UPDATE}\` to tighten the baseline, and commit it.`)
  }
  return 1
}

// Writes the baseline of `found`; reports what it records above the old one.
function writeBaseline(
  root: string,
  found: readonly Oversize[],
  findings: readonly Finding[],
  print: (line: string) => void,
) {
  const baseline = baselineOf(found)
  const note = `Files over ${MAX_FILE_LINES} lines and functions over ${MAX_FUNCTION_LINES} when the rule was adopted: this list may only shrink (scripts/check-shape.ts; rewrite it with \`${UPDATE}\`).`
  mkdirSync(dirname(join(root, BASELINE_PATH)), { recursive: true })
  writeFileSync(join(root, BASELINE_PATH), `${JSON.stringify({ note, ...baseline }, null, 2)}\n`)
  const added = findings.filter((f) => f.kind === 'new' || f.kind === 'grew')
  const tightened = findings.length - added.length
  print(`${BASELINE_PATH}: ${found.length} exceptions recorded, ${tightened} tightened or dropped.`)
  if (added.length > 0) {
    print(`${added.length} recorded above the old baseline (a review should ask why; splitting is better):`)
    for (const f of added) print(`  ${f.kind.padEnd(6)} ${f.text.replace(/: split it$/, '')}`)
  }
  return 0
}

/** Runs the command line `args` (`[root] [--update]`); returns the exit code. */
export function cli(args: readonly string[], print: (line: string) => void = console.log): number {
  const flags = args.filter((a) => a.startsWith('-'))
  const roots = args.filter((a) => !a.startsWith('-'))
  const unknown = flags.filter((f) => f !== '--update')
  if (unknown.length > 0 || roots.length > 1) {
    print(
      `check-shape: unknown argument ${[...unknown, ...roots.slice(1)].join(' ')}; usage: check-shape.ts [root] [--update]`,
    )
    return 2
  }
  return main(resolve(roots[0] ?? '.'), print, flags.length > 0)
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = cli(process.argv.slice(2))
}
