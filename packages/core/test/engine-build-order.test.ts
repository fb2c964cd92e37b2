/**
 * The engine's fields are its build order: each field's initializer — and every builder method it
 * calls, transitively — may read only fields declared above it. TypeScript checks a direct read in an
 * initializer, not a read inside a `#newX()` builder; this test checks both, from the source.
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const FILE = fileURLToPath(new URL('../src/engine/engine.ts', import.meta.url))

interface Reads {
  readonly fields: Set<string>
  readonly methods: Set<string>
}

// `this.x` / `this.#x` reads and `const { a, b } = this` bindings evaluated now (closures are skipped:
// they run later).
function eagerReads(node: ts.Node): Reads {
  const fields = new Set<string>()
  const methods = new Set<string>()
  const visit = (n: ts.Node): void => {
    if (ts.isArrowFunction(n) || ts.isFunctionExpression(n)) return
    if (ts.isPropertyAccessExpression(n) && n.expression.kind === ts.SyntaxKind.ThisKeyword) {
      const name = n.name.getText()
      if (ts.isCallExpression(n.parent) && n.parent.expression === n) methods.add(name)
      else fields.add(name)
    }
    if (ts.isVariableDeclaration(n) && n.initializer?.kind === ts.SyntaxKind.ThisKeyword) {
      if (ts.isObjectBindingPattern(n.name)) {
        for (const e of n.name.elements) fields.add((e.propertyName ?? e.name).getText())
      }
    }
    ts.forEachChild(n, visit)
  }
  visit(node)
  return { fields, methods }
}

function engineClass(): ts.ClassDeclaration {
  const source = ts.createSourceFile(FILE, readFileSync(FILE, 'utf8'), ts.ScriptTarget.ES2022, true)
  const found = source.statements.find(
    (s): s is ts.ClassDeclaration => ts.isClassDeclaration(s) && s.name?.text === 'Engine',
  )
  if (found === undefined) throw new Error('no Engine class in engine.ts')
  return found
}

/** Each field that reads (directly or through builders) a field not declared above it. */
function buildOrderViolations(cls: ts.ClassDeclaration): string[] {
  const inherited = new Set(['options', 'events'])
  const methods = new Map<string, ts.MethodDeclaration>()
  for (const m of cls.members) if (ts.isMethodDeclaration(m)) methods.set(m.name.getText(), m)
  const declared = new Set<string>(inherited)
  const out: string[] = []
  for (const member of cls.members) {
    if (!ts.isPropertyDeclaration(member)) continue
    const name = member.name.getText()
    if (member.initializer !== undefined) {
      const read = new Set<string>()
      const seen = new Set<string>()
      const walk = (node: ts.Node): void => {
        const r = eagerReads(node)
        for (const f of r.fields) read.add(f)
        for (const m of r.methods) {
          const body = methods.get(m)
          if (body !== undefined && !seen.has(m)) {
            seen.add(m)
            walk(body)
          }
        }
      }
      walk(member.initializer)
      for (const f of read) if (!declared.has(f) && !methods.has(f)) out.push(`${name} reads ${f} before it is built`)
    }
    declared.add(name)
  }
  return out
}

describe('the engine’s build order', () => {
  it('builds every field only from fields declared above it, through its builders too', () => {
    expect(buildOrderViolations(engineClass())).toEqual([])
  })

  it('catches a builder that reads a field declared after the one it builds', () => {
    const source = ts.createSourceFile(
      'x.ts',
      `class Engine { readonly a = this.#newA(); readonly b = 1; #newA() { const { b } = this; return this.c ?? b } readonly c = 2 }`,
      ts.ScriptTarget.ES2022,
      true,
    )
    const cls = source.statements[0] as ts.ClassDeclaration
    expect(buildOrderViolations(cls)).toEqual(['a reads b before it is built', 'a reads c before it is built'])
  })
})
