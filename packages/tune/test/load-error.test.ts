import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { fullCause, ModuleLoadError } from '../src/errors.js'
import { loadModule } from '../src/module.js'

const dir = mkdtempSync(join(tmpdir(), 'flowing-tune-load-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

// A module whose top level fails with a two-level cause chain.
const broken = join(dir, 'broken.mjs')
writeFileSync(
  broken,
  `function connect() { throw new Error('ECONNREFUSED 127.0.0.1:5432') }
try { connect() } catch (cause) { throw new Error('could not open the pool', { cause }) }
export default {}
`,
)

describe('a module that does not load', () => {
  it('keeps what the import threw as the cause', async () => {
    const error = await loadModule(broken).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(ModuleLoadError)
    expect((error as Error).message).toMatch(/^Could not load .*broken\.mjs: could not open the pool$/)
    const text = fullCause((error as Error).cause)
    expect(text).toMatch(/^Error: could not open the pool\n {4}at .*broken\.mjs:2/)
    expect(text).toMatch(/\nCaused by: Error: ECONNREFUSED 127\.0\.0\.1:5432\n {4}at connect .*broken\.mjs:1/)
  })

  it('is printed whole by the bin: the cause chain and the stacks', async () => {
    const main = resolve(import.meta.dirname, '../src/main.ts')
    const run = promisify(execFile)(
      process.execPath,
      ['--conditions=@flowing/source', '--import', 'tsx', main, broken],
      { cwd: resolve(import.meta.dirname, '..') }, // where tsx resolves
    )
    const failure = await run.then(
      () => undefined,
      (e: unknown) => e as { code: number; stderr: string },
    )
    expect(failure?.code).toBe(1)
    const stderr = failure?.stderr ?? ''
    expect(stderr).toMatch(/^✗ flowing-tune: Could not load .*broken\.mjs: could not open the pool\n/)
    expect(stderr).toMatch(/\n {2}Error: could not open the pool\n {6}at /)
    expect(stderr).toMatch(/\n {2}Caused by: Error: ECONNREFUSED 127\.0\.0\.1:5432\n {6}at connect /)
  }, 30_000)
})

describe('fullCause()', () => {
  it('stops at a cycle and prints non-errors as strings', () => {
    const a = new Error('a')
    const b = new Error('b', { cause: a })
    ;(a as { cause?: unknown }).cause = b
    expect(fullCause(b).match(/Caused by/g)).toHaveLength(1)
    expect(fullCause(new Error('top', { cause: 'plain reason' }))).toMatch(/\nCaused by: plain reason$/)
  })
})
