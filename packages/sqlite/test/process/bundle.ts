/**
 * Child processes from TypeScript without tsx's ~1 s start-up: esbuild bundles the child's entry (and
 * the workspace sources it imports, through the `@flowing/source` condition) into one `.mjs`, with
 * better-sqlite3 left outside as an absolute path — so a test can start twenty children in seconds.
 */
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { build } from 'esbuild'

const require = createRequire(import.meta.url)

/** Bundles `entry` into `<outDir>/<name>.mjs`; returns that path. */
export async function bundleChild(entry: string, outDir: string, name: string): Promise<string> {
  const outfile = join(outDir, `${name}.mjs`)
  const driver = require.resolve('better-sqlite3')
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    conditions: ['@flowing/source'],
    logLevel: 'silent',
    plugins: [
      {
        name: 'external-driver',
        setup(b) {
          b.onResolve({ filter: /^better-sqlite3$/ }, () => ({ path: driver, external: true }))
        },
      },
    ],
  })
  return outfile
}
