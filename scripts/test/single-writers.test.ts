import { readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { sourceFiles } from '../check-cycles.js'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const core = join(root, 'packages/core/src')
const files = sourceFiles(root).filter((file) => file.startsWith(`${core}/`))

/** The files of core whose code (comments aside) matches `pattern`, relative to its `src`. */
function writersOf(pattern: RegExp): string[] {
  return files
    .filter((file) => pattern.test(withoutComments(readFileSync(file, 'utf8'))))
    .map((file) => relative(core, file))
    .sort()
}

function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '')
}

describe('invariants with one writer in @flowing/core', () => {
  it('counts posted in one place: the ways in (the front counts nothing)', () => {
    expect(writersOf(/\bposted\s*(\+\+|\+=)/)).toEqual(['admission/entries.ts'])
  })

  it('builds a snapshot in one place, on the loop clock', () => {
    expect(writersOf(/\bformat:\s*SNAPSHOT_FORMAT\b/)).toEqual(['shutdown/snapshot.ts'])
  })

  it('reads the wall clock only behind the Clock interface', () => {
    expect(writersOf(/\bDate\.now\(\)/)).toEqual(['clock.ts'])
  })
})
