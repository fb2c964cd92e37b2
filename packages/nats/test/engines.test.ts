/**
 * Regression: `@flowing/nats` supports Node ≥ 20, so nothing it installs may ask for more — npm warned
 * on every install when `@nats-io/nuid` 3 (engines `>= 22.x`) came in through the 3.4 clients.
 */
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { expect, it } from 'vitest'

// Each package's package.json, found from its entry as Node resolves it from the package that depends
// on it (not every package exports its package.json).
function manifest(from: string, name: string): { path: string; engines?: { node?: string } } {
  for (let dir = dirname(createRequire(from).resolve(name)); dir !== dirname(dir); dir = dirname(dir)) {
    const path = join(dir, 'package.json')
    if (!existsSync(path)) continue
    const json = JSON.parse(readFileSync(path, 'utf8')) as { name?: string; engines?: { node?: string } }
    if (json.name === name) return { path, ...json }
  }
  throw new Error(`no package.json of ${name} above its entry`)
}

it('installs no @nats-io package whose engines ask for a Node newer than 20', () => {
  const self = createRequire(import.meta.url).resolve('../package.json')
  const seen: string[] = []
  const visit = (from: string, name: string): void => {
    const m = manifest(from, name)
    if (seen.includes(m.path)) return
    seen.push(m.path)
    const wanted = m.engines?.node
    if (wanted !== undefined) {
      const major = Number(/>=\s*v?(\d+)/.exec(wanted)?.[1] ?? Number.NaN)
      expect(major, `${name} asks for node ${wanted}`).toBeLessThanOrEqual(20)
    }
    const deps = (JSON.parse(readFileSync(m.path, 'utf8')) as { dependencies?: Record<string, string> }).dependencies
    for (const dep of Object.keys(deps ?? {})) if (dep.startsWith('@nats-io/')) visit(m.path, dep)
  }
  for (const name of ['@nats-io/transport-node', '@nats-io/jetstream', '@nats-io/kv']) visit(self, name)
  expect(seen.some((p) => dirname(p).endsWith(join('@nats-io', 'nuid')))).toBe(true) // it was looked at
})
