/**
 * Vitest global setup of the postgres project: finds the PostgreSQL binaries and runs `initdb` once
 * into a template directory that each test file's server copies; removes it at the end.
 */
import { rmSync } from 'node:fs'
import { dirname } from 'node:path'
import type { TestProject } from 'vitest/node'
import { findPostgres, makeTemplate, type Provided } from './server.js'

declare module 'vitest' {
  export interface ProvidedContext {
    postgres: Provided
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  const found = await findPostgres()
  if ('reason' in found) {
    project.provide('postgres', { ok: false, reason: found.reason })
    return () => {}
  }
  const template = await makeTemplate(found)
  project.provide('postgres', { ok: true, postgres: found, template })
  return () => rmSync(dirname(template), { recursive: true, force: true })
}
