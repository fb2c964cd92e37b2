import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = resolve(fileURLToPath(import.meta.url), '../../..')

interface Manifest {
  readonly name: string
  readonly private?: boolean
  readonly [field: string]: unknown
}

// Every workspace manifest: the packages (discovered, not listed), the benchmarks and the root.
function manifests(): { dir: string; json: Manifest }[] {
  const dirs = readdirSync(join(root, 'packages')).map((d) => join(root, 'packages', d))
  return [...dirs, join(root, 'benchmarks'), root].map((dir) => ({
    dir,
    json: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest,
  }))
}

const published = manifests().filter((m) => m.json.private !== true)

describe('package manifests', () => {
  it('finds the public packages', () => {
    expect(published.map((m) => m.json.name)).toContain('@flowing/core')
  })

  it('leave no workspace:* range (pnpm would pin the sibling exactly)', () => {
    for (const { json } of manifests()) {
      for (const field of ['dependencies', 'devDependencies', 'peerDependencies']) {
        const deps = (json[field] ?? {}) as Record<string, string>
        for (const [dep, range] of Object.entries(deps))
          expect(`${json.name} ${dep} ${range}`).not.toMatch(/workspace:\*/)
      }
    }
  })

  it.each(published.map((m) => [m.json.name, m.json, m.dir] as const))(
    '%s has what a published package needs',
    (_, json, dir) => {
      expect(json['license']).toBe('MIT')
      expect(json['author']).toBeTypeOf('string')
      expect(json['keywords']).toBeInstanceOf(Array)
      expect(json['types']).toBe('./dist/index.d.ts')
      expect(json['engines']).toEqual({ node: '>=20.19' })
      // The maps the build writes, and the sources they name (check:pack resolves every one in the tarball).
      expect(json['files']).toEqual([
        'dist/**/*.js',
        'dist/**/*.js.map',
        'dist/**/*.d.ts',
        'dist/**/*.d.ts.map',
        'src/**/*.ts',
        // Files a package serves as they are (the dashboard's page, script and styles).
        ...(existsSync(join(dir, 'assets')) ? ['assets/**'] : []),
      ])
      expect(json['scripts']).toMatchObject({ prepack: 'node ../../scripts/pack/refuse-npm.mjs' })
      const publish = json['publishConfig'] as { access: string; exports: unknown }
      expect(publish.access).toBe('public')
      expect(JSON.stringify(publish.exports)).not.toContain('@flowing/source')
    },
  )
})
