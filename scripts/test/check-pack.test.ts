import { readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ATTW_IGNORED_RULES, NODE_FREE_EXCEPTIONS, publicPackages } from '../check-pack.js'
import { sourceMapProblems } from '../pack/source-maps.js'

const root = resolve(import.meta.dirname, '../..')

describe('check:pack', () => {
  it('packs exactly the packages that are not private, found on disk (a new package needs no list)', () => {
    const onDisk = readdirSync(join(root, 'packages'))
      .map((d) => JSON.parse(readFileSync(join(root, 'packages', d, 'package.json'), 'utf8')))
      .filter((m) => m.private !== true)
      .map((m) => m.name as string)
      .sort()
    const found = publicPackages().map((p) => p.name)
    expect(found).toEqual(onDisk)
    expect(found).toContain('@flowing/core')
    expect(found).not.toContain('@flowing/benchmarks')
  })

  it('is part of the test command CI runs', () => {
    const scripts = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts
    expect(scripts['check:pack']).toBe('tsx scripts/check-pack.ts')
    expect(scripts.test).toMatch(/pnpm run check:pack$/)
  })

  it('ignores one arethetypeswrong rule only, the one require(esm) made untrue', () => {
    expect([...ATTW_IGNORED_RULES]).toEqual(['cjs-resolves-to-esm'])
  })

  it('leaves out of the compile without @types/node only packages that exist, each with its reason', () => {
    const names = publicPackages().map((p) => p.name)
    for (const [name, why] of Object.entries(NODE_FREE_EXCEPTIONS)) {
      expect(names).toContain(name)
      expect(why.length).toBeGreaterThan(0)
    }
  })

  it('keeps the build info of tsc -b out of dist/ (so no tarball can hold it), in a git-ignored .tsbuild/', () => {
    const base = JSON.parse(readFileSync(join(root, 'tsconfig.base.json'), 'utf8'))
    const file: string = base.compilerOptions.tsBuildInfoFile
    expect(file.startsWith('$' + '{configDir}/.tsbuild/')).toBe(true)
    expect(readFileSync(join(root, '.gitignore'), 'utf8').split('\n')).toContain('.tsbuild/')
  })
})

describe('sourceMapProblems()', () => {
  const js = (map: string) => `export const a = 1\n//# sourceMappingURL=${map}\n`
  const map = (sources: string[], extra: object = {}) => JSON.stringify({ version: 3, sources, mappings: '', ...extra })

  it('passes a tarball whose maps and their sources are all in it', () => {
    const files = new Map([
      ['dist/a.js', js('a.js.map')],
      ['dist/a.js.map', map(['../src/a.ts'])],
      ['dist/a.d.ts', js('a.d.ts.map')],
      ['dist/a.d.ts.map', map(['../src/a.ts'])],
      ['src/a.ts', 'export const a = 1'],
      ['dist/plain.js', 'export {}'],
    ])
    expect(sourceMapProblems(files)).toEqual([])
  })

  it('fails a .js or .d.ts that names a map the tarball does not hold (maps left out of `files`)', () => {
    const files = new Map([
      ['dist/a.js', js('a.js.map')],
      ['dist/a.d.ts', js('a.d.ts.map')],
    ])
    expect(sourceMapProblems(files)).toEqual([
      { file: 'dist/a.js', problem: 'names the source map `a.js.map`, which the tarball does not hold' },
      { file: 'dist/a.d.ts', problem: 'names the source map `a.d.ts.map`, which the tarball does not hold' },
    ])
  })

  it('fails a map whose sources are missing, or point outside the package; embedded sources pass', () => {
    const files = new Map([
      ['dist/a.js', js('a.js.map')],
      ['dist/a.js.map', map(['../src/a.ts', '../../../core/src/b.ts'])],
      ['dist/b.js', js('b.js.map')],
      ['dist/b.js.map', map(['../src/b.ts'], { sourcesContent: ['export {}'] })],
    ])
    expect(sourceMapProblems(files)).toEqual([
      { file: 'dist/a.js.map', problem: 'names the source `../src/a.ts`, which the tarball does not hold' },
      { file: 'dist/a.js.map', problem: 'names the source `../../../core/src/b.ts`, which the tarball does not hold' },
    ])
  })

  it('honours sourceRoot and fails a map that is not JSON', () => {
    const files = new Map([
      ['dist/a.js', js('maps/a.js.map')],
      ['dist/maps/a.js.map', map(['a.ts'], { sourceRoot: '../../src' })],
      ['src/a.ts', ''],
      ['dist/c.js', js('c.js.map')],
      ['dist/c.js.map', '{'],
    ])
    expect(sourceMapProblems(files)).toEqual([{ file: 'dist/c.js.map', problem: 'is not JSON' }])
  })
})
