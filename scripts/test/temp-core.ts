import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterEach } from 'vitest'

/**
 * Throw-away repository roots for the checks' tests: `core(files)` writes `files` (path under
 * packages/core/src → source) into a fresh root; every root goes after each test.
 */
export function tempCores(prefix: string): (files: Record<string, string>) => string {
  const roots: string[] = []
  afterEach(() => {
    for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true })
  })
  return (files) => {
    const root = mkdtempSync(join(tmpdir(), prefix))
    roots.push(root)
    for (const [path, text] of Object.entries(files)) {
      const file = join(root, 'packages/core/src', path)
      mkdirSync(dirname(file), { recursive: true })
      writeFileSync(file, text)
    }
    return root
  }
}
