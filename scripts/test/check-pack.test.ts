import { readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ATTW_IGNORED_RULES, NODE_FREE_EXCEPTIONS, publicPackages } from '../check-pack.js'

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
