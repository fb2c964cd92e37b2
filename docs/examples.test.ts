/**
 * The code in the docs is compiled and run, so it cannot rot.
 *
 * Every ```ts (or ```typescript) block of `README.md`, of `packages/<name>/README.md` and of every
 * Markdown file under `docs/` becomes its own ES module in a temp directory. All of them are type-checked in one TypeScript program
 * with the options of `tsconfig.base.json` (strict, `exactOptionalPropertyTypes`, NodeNext), with
 * `@flowing/<name>` mapped to `packages/<name>/src/index.ts` through `paths`; then each is imported, so
 * its top-level code runs to completion (an example must finish on its own: virtual time or a tiny
 * workload, ending with `await loop.stop()`). A failure names the document, the block and its line.
 *
 * One info-string flag: ```ts no-run type-checks a block without running it (code that needs a network
 * or never ends). Fragments that cannot compile on their own belong in a ```text block, not in ```ts.
 *
 * Imports resolve as they would from the repo root: the temp directory's `node_modules` links to the
 * root's packages (`vitest`, `fast-check` …) and to each workspace package as `@flowing/<name>`, whose
 * exports map sends the `@flowing/source` condition to `src/index.ts` — as in the package tests.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import ts from 'typescript'
import { afterAll, beforeAll, describe, it, vi } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))

/** One code block of one document. */
interface Example {
  /** The document, relative to the repo root, e.g. `docs/architecture.md`. */
  readonly doc: string
  /** 1-based index among the document's TypeScript blocks. */
  readonly index: number
  /** 1-based line of the block's first code line in the document. */
  readonly line: number
  /** Columns of indentation stripped from each line (a fence nested in a list). */
  readonly indent: number
  readonly code: string
  /** False for `no-run` blocks: type-checked only. */
  readonly run: boolean
}

/** `README.md`, every package README and every Markdown file under `docs/` (not the generated API). */
function documents(): string[] {
  const found = existsSync(join(root, 'README.md')) ? ['README.md'] : []
  for (const name of readdirSync(join(root, 'packages')).sort()) {
    if (existsSync(join(root, 'packages', name, 'README.md'))) found.push(`packages/${name}/README.md`)
  }
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      if (entry.name.startsWith('.') || entry.name === 'node_modules' || `${dir}/${entry.name}` === 'docs/api') continue
      if (entry.isDirectory()) walk(`${dir}/${entry.name}`)
      else if (entry.name.endsWith('.md')) found.push(`${dir}/${entry.name}`)
    }
  }
  walk('docs')
  return found
}

const FENCE = /^( {0,3})(`{3,}|~{3,})(.*)$/

/** The TypeScript blocks of one document, in order. */
function extract(doc: string, text: string): Example[] {
  const lines = text.split(/\r?\n/)
  const examples: Example[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i] as string)
    if (open === null) continue
    const [, indent = '', fence = '', info = ''] = open
    const [lang = '', ...flags] = info.trim().split(/\s+/)
    const body: string[] = []
    let j = i + 1
    for (; j < lines.length; j++) {
      const line = lines[j] as string
      const close = FENCE.exec(line)
      // A closing fence: the same character, at least as long, nothing after it.
      if (close?.[2]?.startsWith(fence) && close[3]?.trim() === '') break
      body.push(line.startsWith(indent) ? line.slice(indent.length) : line.trimStart())
    }
    if (j === lines.length) throw new Error(`${doc}:${i + 1}: code fence ${fence} is never closed`)
    if (lang === 'ts' || lang === 'typescript') {
      examples.push({
        doc,
        index: examples.length + 1,
        line: i + 2,
        indent: indent.length,
        code: body.join('\n'),
        run: !flags.includes('no-run'),
      })
    }
    i = j
  }
  return examples
}

/** The repo's compiler options for checking examples: the base config minus build outputs, plus `paths`. */
function compilerOptions(): ts.CompilerOptions {
  const base = ts.readConfigFile(join(root, 'tsconfig.base.json'), ts.sys.readFile)
  if (base.error) throw new Error(ts.flattenDiagnosticMessageText(base.error.messageText, '\n'))
  const json = { ...(base.config as { compilerOptions: Record<string, unknown> }).compilerOptions }
  for (const buildOnly of [
    'composite',
    'incremental',
    'declaration',
    'declarationMap',
    'sourceMap',
    'rootDir',
    'outDir',
    'tsBuildInfoFile',
  ]) {
    delete json[buildOnly]
  }
  const { options, errors } = ts.convertCompilerOptionsFromJson(json, root)
  if (errors.length > 0)
    throw new Error(errors.map((e) => ts.flattenDiagnosticMessageText(e.messageText, '\n')).join('\n'))
  return {
    ...options,
    noEmit: true,
    // A block without imports is still a module: examples never share top-level names.
    moduleDetection: ts.ModuleDetectionKind.Force,
    paths: { '@flowing/*': [join(root, 'packages/*/src/index.ts')] },
    typeRoots: [join(root, 'node_modules/@types')],
  }
}

/** Workspace packages by name (`@flowing/core` → `packages/core`), for the run-time links. */
function workspacePackages(): Map<string, string> {
  const packages = new Map<string, string>()
  for (const name of readdirSync(join(root, 'packages'))) {
    const manifest = join(root, 'packages', name, 'package.json')
    if (existsSync(manifest)) packages.set((JSON.parse(readFileSync(manifest, 'utf8')) as { name: string }).name, name)
  }
  return packages
}

/** Gives `dir` the root's dependencies and the workspace packages, as symlinks. */
function linkModules(dir: string): void {
  const modules = join(dir, 'node_modules')
  mkdirSync(join(modules, '@flowing'), { recursive: true })
  for (const entry of readdirSync(join(root, 'node_modules'))) {
    if (entry.startsWith('.') || entry === '@flowing') continue
    symlinkSync(join(root, 'node_modules', entry), join(modules, entry), 'junction')
  }
  for (const [name, folder] of workspacePackages()) {
    symlinkSync(join(root, 'packages', folder), join(modules, name), 'junction')
  }
}

function formatDiagnostic(example: Example, d: ts.Diagnostic): string {
  const message = ts.flattenDiagnosticMessageText(d.messageText, '\n')
  if (d.file === undefined || d.start === undefined) return `TS${d.code}: ${message}`
  const { line, character } = d.file.getLineAndCharacterOfPosition(d.start)
  return `${example.doc}:${example.line + line}:${example.indent + character + 1} TS${d.code}: ${message}`
}

const examples = documents().flatMap((doc) => extract(doc, readFileSync(join(root, doc), 'utf8')))
// Where each example is written; filled in beforeAll.
const files = new Map<Example, string>()
// Type errors per example.
const typeErrors = new Map<Example, string[]>()
let dir = ''

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'flowing-docs-'))
  writeFileSync(join(dir, 'package.json'), '{ "type": "module", "private": true }\n')
  linkModules(dir)
  for (const example of examples) {
    const slug = example.doc.replace(/\.md$/, '').replace(/[^a-zA-Z0-9]+/g, '-')
    const file = join(dir, `${slug}-${example.index}.ts`)
    writeFileSync(file, example.code)
    files.set(example, file)
  }
  const byFile = new Map([...files].map(([example, file]) => [file, example]))
  const program = ts.createProgram([...files.values()], compilerOptions())
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const example = d.file === undefined ? undefined : byFile.get(d.file.fileName)
    // Errors elsewhere (the packages themselves) belong to the packages' own type-check.
    if (d.file !== undefined && example === undefined) continue
    for (const target of example === undefined ? examples : [example]) {
      typeErrors.set(target, [...(typeErrors.get(target) ?? []), formatDiagnostic(target, d)])
    }
  }
}, 60_000)

afterAll(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true })
})

describe('docs examples', () => {
  it('finds examples to check', () => {
    if (examples.length === 0) throw new Error('no ```ts block found in README.md, packages/*/README.md or docs/')
  })

  for (const doc of new Set(examples.map((e) => e.doc))) {
    describe(doc, () => {
      for (const example of examples.filter((e) => e.doc === doc)) {
        const name = `block #${example.index} (line ${example.line}) ${example.run ? 'type-checks and runs' : 'type-checks'}`
        it(name, async () => {
          const errors = typeErrors.get(example) ?? []
          if (errors.length > 0)
            throw new Error(`${doc} block #${example.index} does not type-check:\n${errors.join('\n')}`)
          if (!example.run) return
          await runQuietly(example, files.get(example) as string)
        }, 20_000)
      }
    })
  }
})

/** Imports the example with console output captured; a throw is reported with what it printed. */
async function runQuietly(example: Example, file: string): Promise<void> {
  const printed: string[] = []
  const capture = (...args: unknown[]): void => {
    printed.push(args.map(String).join(' '))
  }
  const spies = (['log', 'info', 'warn', 'error', 'debug'] as const).map((level) =>
    vi.spyOn(console, level).mockImplementation(capture),
  )
  try {
    await import(pathToFileURL(file).href)
  } catch (error) {
    const output = printed.length === 0 ? '' : `\nIt printed:\n${printed.join('\n')}`
    throw new Error(`${example.doc} block #${example.index} (line ${example.line}) threw: ${String(error)}${output}`, {
      cause: error,
    })
  } finally {
    for (const spy of spies) spy.mockRestore()
  }
}
