import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { findCycles, formatCycle, importGraph, main, sourceFiles } from '../check-cycles.js'

const roots: string[] = []

/** A throw-away repository root with `files` (path → source) under it. */
function fixture(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'flowing-cycles-'))
  roots.push(root)
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  return root
}

function cyclesOf(root: string): string[] {
  return findCycles(importGraph(root, sourceFiles(root))).map((cycle) => formatCycle(root, cycle))
}

afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true })
})

describe('check-cycles', () => {
  describe('findCycles()', () => {
    it('finds a value cycle and prints it as a closed path', () => {
      const root = fixture({
        'packages/a/src/x.ts': "import { y } from './y.js'\nexport const x = y",
        'packages/a/src/y.ts': "import { z } from './deep/z.js'\nexport const y = z",
        'packages/a/src/deep/z.ts': "export { x as z } from '../x.js'",
      })
      expect(cyclesOf(root)).toEqual([
        'packages/a/src/deep/z.ts → packages/a/src/x.ts → packages/a/src/y.ts → packages/a/src/deep/z.ts',
      ])
    })

    it('finds a cycle made of type-only imports, marking those edges', () => {
      const root = fixture({
        'packages/a/src/contract.ts': "import type { Impl } from './impl.js'\nexport type Contract = { impl: Impl }",
        'packages/a/src/impl.ts':
          "import { type Contract } from './contract.js'\nexport type Impl = { of: Contract }\nexport const n = 1",
        'packages/a/src/other.ts': "export type Other = import('./third.js').Third",
        'packages/a/src/third.ts': "export type { Other as Third } from './other.js'",
      })
      expect(cyclesOf(root)).toEqual([
        'packages/a/src/contract.ts ─type→ packages/a/src/impl.ts ─type→ packages/a/src/contract.ts',
        'packages/a/src/other.ts ─type→ packages/a/src/third.ts ─type→ packages/a/src/other.ts',
      ])
    })

    it('finds a cycle across packages through @flowing/<name>, and a file importing itself', () => {
      const root = fixture({
        'packages/a/src/index.ts': "import { b } from '@flowing/b'\nexport const a = b",
        'packages/b/src/index.ts': "import type { A } from '@flowing/a'\nexport const b = 1\nexport type B = A",
        'packages/c/src/self.ts': "import './self.js'",
      })
      expect(cyclesOf(root)).toEqual([
        'packages/a/src/index.ts → packages/b/src/index.ts ─type→ packages/a/src/index.ts',
        'packages/c/src/self.ts → packages/c/src/self.ts',
      ])
    })

    it('passes an acyclic tree: shared leaves, external modules, tests and .d.ts files ignored', () => {
      const root = fixture({
        'packages/a/src/index.ts': "export * from './left.js'\nexport * from './right.js'",
        'packages/a/src/left.ts':
          "import { leaf } from './internal/leaf.js'\nimport fs from 'node:fs'\nexport const left = [leaf, fs]",
        'packages/a/src/right.ts': "import type { Leaf } from './internal/leaf.js'\nexport type Right = Leaf",
        'packages/a/src/internal/leaf.ts':
          "import { EventEmitter } from 'eventemitter3'\nexport const leaf = EventEmitter\nexport type Leaf = 1",
        'packages/a/src/ambient.d.ts': "import './index.js'",
        'packages/a/test/index.test.ts': "import '../src/index.js'",
      })
      expect(cyclesOf(root)).toEqual([])
      const lines: string[] = []
      expect(main(root, false, (line) => lines.push(line))).toBe(0)
      expect(lines).toEqual([])
    })
  })

  describe('main()', () => {
    it('fails listing each cycle, unless told to warn only', () => {
      const root = fixture({
        'packages/a/src/x.ts': "import './y.js'",
        'packages/a/src/y.ts': "import './x.js'",
      })
      const lines: string[] = []
      expect(main(root, false, (line) => lines.push(line))).toBe(1)
      expect(lines.slice(0, 2)).toEqual([
        '1 import cycle among packages/*/src:',
        '  packages/a/src/x.ts → packages/a/src/y.ts → packages/a/src/x.ts',
      ])
      expect(main(root, true, () => {})).toBe(0)
    })
  })
})
