/**
 * Removes every build output: each project's `dist/` and, with it, its `.tsbuild/` (the build info
 * `tsc -b` keeps outside `dist/`). Deleting only `dist/` would leave `tsc -b` trusting a build info
 * that still says everything is up to date, and it would emit nothing. Run: `pnpm run clean`.
 *
 * @module
 */
import { readdirSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'

const root = resolve(import.meta.dirname, '..')
const projects = [
  ...readdirSync(join(root, 'packages')).map((d) => join(root, 'packages', d)),
  join(root, 'benchmarks'),
]
for (const dir of projects) {
  for (const output of ['dist', '.tsbuild']) rmSync(join(dir, output), { recursive: true, force: true })
}
console.log(`clean: dist/ and .tsbuild/ removed in ${projects.length} projects`)
