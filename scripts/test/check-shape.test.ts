import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { main } from '../check-shape.js'

const roots: string[] = []

function fixture(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'flowing-shape-'))
  roots.push(root)
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  return root
}

const lines = (n: number, body = 'x++'): string => Array.from({ length: n }, () => `  ${body}`).join('\n')

afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true })
})

describe('check-shape', () => {
  describe('main()', () => {
    it('passes a tree within the limits', () => {
      const root = fixture({ 'packages/a/src/ok.ts': `let x = 0\nexport function f() {\n${lines(58)}\n}\n` })
      expect(main(root, () => {})).toBe(0)
    })

    it('reports a function over 60 lines, and a file over 450 lines, with where they start', () => {
      const printed: string[] = []
      const root = fixture({
        'packages/a/src/long-fn.ts': `let x = 0\nexport const g = () => {\n${lines(59)}\n}\n`,
        'packages/a/src/long-file.ts': `${'export const y = 1\n'.repeat(451)}`,
      })
      expect(main(root, (l) => printed.push(l))).toBe(1)
      expect(printed.join('\n')).toContain('packages/a/src/long-fn.ts:2 g — 61 lines (limit 60)')
      expect(printed.join('\n')).toContain('packages/a/src/long-file.ts:1 file — 451 lines (limit 450)')
    })

    it('lets the error catalogues be long', () => {
      const root = fixture({ 'packages/a/src/errors.ts': `${'export const y = 1\n'.repeat(600)}` })
      expect(main(root, () => {})).toBe(0)
    })
  })
})
