import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { MAX_MEMBERS, main, portFindings } from '../check-ports.js'
import { tempCores } from './temp-core.js'

const core = tempCores('flowing-ports-')

const STAGE = 'export class Outcomes { succeeded(): void {} cancelled(): void {} }\n'
const members = (n: number) => Array.from({ length: n }, (_, i) => `  readonly m${i}: number`).join('\n')

describe('check-ports', () => {
  it(`refuses a parts interface wider than ${MAX_MEMBERS} members, inherited ones counted`, () => {
    const root = core({
      'a/a.ts': `interface Base { readonly b: number }\nexport interface WideParts extends Base {\n${members(MAX_MEMBERS)}\n}\n`,
      'a/b.ts': `export interface NarrowPorts {\n${members(MAX_MEMBERS)}\n}\n`,
    })
    const { widths, findings } = portFindings(root)
    expect(widths.get('a/a.ts WideParts')).toBe(MAX_MEMBERS + 1)
    expect(findings).toEqual([{ file: 'a/a.ts', name: 'WideParts', why: `has ${MAX_MEMBERS + 1} members (at most 7)` }])
  })

  it('refuses a member that is a whole peer stage, optional or not; a Pick of it is a port', () => {
    const root = core({
      'outcomes/outcomes.ts': STAGE,
      'pool/parts.ts': [
        "import type { Outcomes } from '../outcomes/outcomes.js'",
        'export interface AttemptParts {',
        '  readonly whole: Outcomes',
        '  readonly maybe: Outcomes | undefined',
        "  readonly narrow: Pick<Outcomes, 'succeeded'>",
        '  readonly callback: () => void',
        '}',
      ].join('\n'),
    })
    expect(portFindings(root).findings.map((f) => f.why)).toEqual([
      'whole is the whole Outcomes stage',
      'maybe is the whole Outcomes stage',
    ])
  })

  it('passes on the repository as it stands, and says how to fix a finding', () => {
    const here = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
    expect(main(here, () => {})).toBe(0)
    const lines: string[] = []
    expect(
      main(core({ 'outcomes/outcomes.ts': STAGE, 'x.ts': `export interface XParts {\n${members(9)}\n}\n` }), (l) =>
        lines.push(l),
      ),
    ).toBe(1)
    expect(lines[0]).toBe('1 port finding in packages/core/src:')
    expect(lines.at(-1)).toMatch(/leaves, narrow ports and callbacks, at most 7/)
  })
})
