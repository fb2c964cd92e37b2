import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { BASELINE_PATH, cli, main, readBaseline } from '../check-shape.js'

const roots: string[] = []

function fixture(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'flowing-shape-'))
  roots.push(root)
  for (const [path, text] of Object.entries(files)) write(root, path, text)
  return root
}

function write(root: string, path: string, text: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true })
  writeFileSync(join(root, path), text)
}

// Runs the check; returns its exit code and what it printed.
function check(root: string, update = false): { code: number; out: string } {
  const printed: string[] = []
  const code = main(root, (l) => printed.push(l), update)
  return { code, out: printed.join('\n') }
}

const lines = (n: number, body = 'x++'): string => Array.from({ length: n }, () => `  ${body}`).join('\n')
// A function of `n` lines in all (its first line, n − 2 body lines, its closing brace).
const fn = (name: string, n: number): string => `export function ${name}() {\n${lines(n - 2)}\n}\n`
const file = (n: number): string => 'export const y = 1\n'.repeat(n)
const baseline = (files: Record<string, number>, functions: Record<string, number> = {}): string =>
  JSON.stringify({ files, functions })

afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true })
})

describe('check-shape', () => {
  describe('main()', () => {
    it('passes a tree within the limits: files of 300 lines, functions of 40', () => {
      const root = fixture({ 'packages/a/src/ok.ts': `let x = 0\n${fn('f', 40)}`, 'packages/a/src/full.ts': file(300) })
      expect(check(root)).toEqual({ code: 0, out: '' })
    })

    it('reports a function over 40 lines, and a file over 300 lines, with where they start', () => {
      const root = fixture({
        'packages/a/src/long-fn.ts': `let x = 0\nexport const g = () => {\n${lines(39)}\n}\n`,
        'packages/a/src/long-file.ts': file(301),
      })
      const { code, out } = check(root)
      expect(code).toBe(1)
      expect(out).toContain('new    packages/a/src/long-fn.ts:2 g — 41 lines (limit 40): split it')
      expect(out).toContain('new    packages/a/src/long-file.ts:1 file — 301 lines (limit 300): split it')
    })

    it('lets the error catalogues be long', () => {
      const root = fixture({ 'packages/a/src/errors.ts': file(600) })
      expect(check(root).code).toBe(0)
    })

    it('names a function by its enclosing classes and functions, numbering a repeated name', () => {
      const method = `  m() {\n${lines(40)}\n  }\n`
      const root = fixture({ 'packages/a/src/c.ts': `export class A {\n${method}}\nexport class A2 {\n${method}}\n` })
      const body = `export function outer() {\n  const a = () => {\n${lines(40)}\n  }\n  const b = () => {\n${lines(40)}\n  }\n  return [a, b]\n}\n`
      write(root, 'packages/a/src/d.ts', `${body}${body.replace('outer', 'other')}`)
      const { out } = check(root)
      expect(out).toContain('packages/a/src/c.ts:2 A.m — 42 lines')
      expect(out).toContain('A2.m — 42 lines')
      expect(out).toContain('packages/a/src/d.ts:1 outer — 87 lines')
      expect(out).toContain('outer.a — 42 lines')
      expect(out).toContain('other.b — 42 lines')
    })
  })

  describe('the baseline', () => {
    const tree = { 'packages/a/src/big.ts': `${file(310)}${fn('f', 45)}` }
    const recorded = baseline({ 'packages/a/src/big.ts': 355 }, { 'packages/a/src/big.ts › f': 45 })

    it('passes exceptions recorded at their size', () => {
      const root = fixture({ ...tree, [BASELINE_PATH]: recorded })
      expect(check(root)).toEqual({ code: 0, out: '' })
    })

    it('fails an exception that grew past its recorded size', () => {
      const root = fixture({
        ...tree,
        [BASELINE_PATH]: baseline({ 'packages/a/src/big.ts': 350 }, { 'packages/a/src/big.ts › f': 44 }),
      })
      const { code, out } = check(root)
      expect(code).toBe(1)
      expect(out).toContain('grew   packages/a/src/big.ts:1 file — 355 lines (limit 300, recorded 350): split it')
      expect(out).toContain('grew   packages/a/src/big.ts:311 f — 45 lines (limit 40, recorded 44): split it')
    })

    it('fails an exception that shrank, or is gone, and says to tighten the baseline with --update', () => {
      const root = fixture({
        'packages/a/src/big.ts': `${file(250)}${fn('f', 44)}`,
        [BASELINE_PATH]: baseline({ 'packages/a/src/big.ts': 355 }, { 'packages/a/src/big.ts › f': 45 }),
      })
      const { code, out } = check(root)
      expect(code).toBe(1)
      expect(out).toContain(
        'shrank packages/a/src/big.ts:251 f — 44 lines (limit 40, recorded 45): tighten the baseline',
      )
      expect(out).toContain('gone   packages/a/src/big.ts — within its limit or removed (recorded 355)')
      expect(out).toContain('run `npx tsx scripts/check-shape.ts --update` to tighten the baseline')
      expect(out).not.toContain('Split it')
    })

    it('is rewritten by --update from the tree, which then passes; what it adds is reported', () => {
      const root = fixture({ ...tree, [BASELINE_PATH]: baseline({ 'packages/a/src/big.ts': 400 }) })
      const { code, out } = check(root, true)
      expect(code).toBe(0)
      expect(out).toContain('2 exceptions recorded, 1 tightened or dropped')
      expect(out).toContain('new    packages/a/src/big.ts:311 f — 45 lines (limit 40)')
      expect(readBaseline(root)).toEqual({
        files: { 'packages/a/src/big.ts': 355 },
        functions: { 'packages/a/src/big.ts › f': 45 },
      })
      expect(readFileSync(join(root, BASELINE_PATH), 'utf8')).toContain('may only shrink')
      expect(check(root)).toEqual({ code: 0, out: '' })
    })
  })

  describe('cli()', () => {
    it('refuses an unknown flag, naming it and the usage', () => {
      const printed: string[] = []
      expect(cli(['--updat'], (l) => printed.push(l))).toBe(2)
      expect(printed.join('\n')).toContain('unknown argument --updat; usage: check-shape.ts [root] [--update]')
    })

    it('takes the root and --update in any order', () => {
      const root = fixture({ 'packages/a/src/big.ts': file(301) })
      expect(cli(['--update', root], () => {})).toBe(0)
      expect(cli([root], () => {})).toBe(0)
    })
  })
})
