import { readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { publicPackages } from '../check-pack.js'

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
})
