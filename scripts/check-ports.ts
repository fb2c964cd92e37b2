/**
 * The width of core's stage ports: every `…Parts` or `…Ports` interface of `packages/core/src` (what
 * the engine hands a stage) has at most {@link MAX_MEMBERS} members, inherited ones included, and no
 * member is a whole peer stage — a stage sees a leaf (clock, emitter, queue, registry, wheel …), a
 * narrow port (a `Pick` of a stage, an interface of the methods it calls) or a callback. Run by
 * `pnpm test` inside `pnpm run check:cycles`.
 *
 * ```text
 * tsx scripts/check-ports.ts [root]     exit 1 listing each wide port or stage member, 0 otherwise
 * ```
 *
 * @module
 */
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { sourceFiles } from './check-cycles.js'

/** The most members a stage's parts may have. */
export const MAX_MEMBERS = 7

/**
 * Core's stages: the classes that own a step of the pipeline. A parts member typed as one of them
 * (rather than a `Pick` of it or a port interface) hands a stage a whole peer.
 */
export const STAGES: readonly string[] = [
  'Admission',
  'Entries',
  'Pacing',
  'Attempts',
  'Outcomes',
  'Failures',
  'Retries',
  'Circuits',
  'Stopper',
  'Cancels',
  'Requests',
  'Journal',
  'RateLimits',
  'HandBack',
  'DelayedPosts',
  'Engine',
]

/** One finding: a parts interface too wide, or a member that is a peer stage. */
export interface PortFinding {
  readonly file: string
  readonly name: string
  readonly why: string
}

/** The width of each parts interface, and the findings, among the files of core under `root`. */
export function portFindings(root: string): { widths: Map<string, number>; findings: PortFinding[] } {
  const src = join(root, 'packages', 'core', 'src')
  const files = sourceFiles(root).filter((file) => file.startsWith(`${src}/`))
  const program = ts.createProgram(files, { strict: true, target: ts.ScriptTarget.ES2022, noEmit: true })
  const checker = program.getTypeChecker()
  const widths = new Map<string, number>()
  const findings: PortFinding[] = []
  for (const file of files) {
    const source = program.getSourceFile(file)
    if (source === undefined) continue
    for (const node of source.statements) {
      if (!ts.isInterfaceDeclaration(node) || !/(Parts|Ports)$/.test(node.name.text)) continue
      const where = relative(src, file)
      const name = node.name.text
      const members = checker.getPropertiesOfType(checker.getTypeAtLocation(node.name))
      widths.set(`${where} ${name}`, members.length)
      if (members.length > MAX_MEMBERS) {
        findings.push({ file: where, name, why: `has ${members.length} members (at most ${MAX_MEMBERS})` })
      }
      for (const member of members) {
        const stage = stageOf(checker, checker.getTypeOfSymbol(member))
        if (stage !== undefined) findings.push({ file: where, name, why: `${member.name} is the whole ${stage} stage` })
      }
    }
  }
  return { widths, findings }
}

// The stage class a member's type is (undefined or a union with undefined included), if any.
function stageOf(checker: ts.TypeChecker, type: ts.Type): string | undefined {
  const parts = type.isUnion() ? type.types : [type]
  for (const part of parts) {
    const name = part.aliasSymbol === undefined ? part.getSymbol()?.getName() : undefined
    if (name !== undefined && STAGES.includes(name)) return name
  }
  return undefined
}

/** Checks `root`; prints each finding; returns the exit code. */
export function main(root: string, log: (line: string) => void = console.error): number {
  const { findings } = portFindings(root)
  if (findings.length === 0) return 0
  log(`${findings.length} port finding${findings.length === 1 ? '' : 's'} in packages/core/src:`)
  for (const f of findings) log(`  ${f.file} ${f.name}: ${f.why}`)
  log(`Hand a stage leaves, narrow ports and callbacks, at most ${MAX_MEMBERS} (scripts/check-ports.ts).`)
  return 1
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..'))
  if (process.argv.includes('--widths')) {
    for (const [name, width] of portFindings(root).widths) console.log(`${String(width).padStart(3)} ${name}`)
  }
  process.exitCode = main(root)
}
