import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { checkNote, type Kind, lifecycleNames, NOTE, noteProblems, tablesOf } from '../lifecycle-doc.js'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')

const source = new Map([
  ['internal/envelope.ts', 'export enum Where {\n  Ready = 0,\n  /** doc */\n  Done = 1,\n}\n'],
  [
    'shutdown/holders.ts',
    [
      'export function queueHolder(q: Q): Holder { return q }',
      'function helper(): Holder { return h }',
      'export class Retries implements Holder, Other {}',
      'export const delayed: Holder = d',
    ].join('\n'),
  ],
  ['contracts/outcomes.ts', "export type Outcome = 'succeeded' | 'cancelled'\n"],
])

const kinds: Kind[] = [
  { table: 'where', names: ['Where.Ready', 'Where.Done'], from: 'internal/envelope.ts' },
  { table: 'holder', names: ['queueHolder'], from: 'shutdown/holders.ts' },
  { table: 'outcome', names: ['succeeded', 'cancelled'], from: 'contracts/outcomes.ts' },
]

const note = (...extra: string[]): string =>
  [
    '# Note',
    '',
    '| `where` | held by | leaves to |',
    '|---|---|---|',
    '| `Where.Ready` | the queue (`a | b`) | `Running` |',
    '| `Where.Done` | nobody | — |',
    '',
    '| holder | holds |',
    '|---|---|',
    '| `queueHolder` | `Where.Ready` |',
    '',
    '| outcome | from |',
    '|---|---|',
    '| `succeeded` | running |',
    '| `cancelled` | waiting |',
    ...extra,
    '',
  ].join('\n')

describe(NOTE, () => {
  it('has a row for every Where member, holder and Outcome of packages/core/src, and none for one that is gone', () => {
    expect(checkNote(root)).toEqual([])
  })
})

describe('the lifecycle note check', () => {
  it('reads the Where members, the exported holders and the outcomes wherever they are declared', () => {
    const { kinds: found, problems } = lifecycleNames(source)
    expect(problems).toEqual([])
    expect(found.map((k) => [k.table, k.names, k.from])).toEqual([
      ['where', ['Where.Ready', 'Where.Done'], 'internal/envelope.ts'],
      ['holder', ['queueHolder', 'Retries', 'delayed'], 'shutdown/holders.ts'],
      ['outcome', ['succeeded', 'cancelled'], 'contracts/outcomes.ts'],
    ])
  })

  it('fails when it cannot find them, rather than pass on nothing', () => {
    expect(lifecycleNames(new Map([['x.ts', 'export const x = 1']])).problems).toEqual([
      'found no `enum Where` in packages/core/src: teach scripts/lifecycle-doc.ts where it is declared now',
      'found no holder (a function returning `Holder`) in packages/core/src: teach scripts/lifecycle-doc.ts where it is declared now',
      "found no `type Outcome = 'a' | …` in packages/core/src: teach scripts/lifecycle-doc.ts where it is declared now",
    ])
  })

  it('passes a note with one row each, and reads a | inside code marks as text', () => {
    expect(noteProblems(note(), kinds)).toEqual([])
    expect(tablesOf(note())[0]?.rows[0]?.cells).toEqual(['`Where.Ready`', 'the queue (`a | b`)', '`Running`'])
  })

  it('says which row to add for a new member, holder or outcome', () => {
    const more: Kind[] = [
      { ...kinds[0], names: [...(kinds[0]?.names ?? []), 'Where.Limited'] } as Kind,
      kinds[1] as Kind,
      { ...kinds[2], names: [...(kinds[2]?.names ?? []), 'request-failed'] } as Kind,
    ]
    expect(noteProblems(note(), more)).toEqual([
      `${NOTE}: \`Where.Limited\` (internal/envelope.ts) has no row in the where table: add one (\`where\` | held by | leaves to)`,
      `${NOTE}: \`request-failed\` (contracts/outcomes.ts) has no row in the outcome table: add one (outcome | from)`,
    ])
  })

  it('says which row to remove, which cell to fill, and which table is missing', () => {
    const gone: Kind[] = [kinds[0] as Kind, { ...kinds[1], names: [] } as Kind, kinds[2] as Kind]
    const text = note().replace('| `Where.Done` | nobody | — |', '| `Where.Done` | | — |')
    expect(noteProblems(text, gone)).toEqual([
      `${NOTE}:6: \`Where.Done\` has no held by: fill it in`,
      `${NOTE}:10: the holder table lists \`queueHolder\`, not in shutdown/holders.ts: remove its row`,
    ])
    expect(noteProblems('# empty\n', [kinds[2] as Kind])).toEqual([
      `${NOTE} has no table whose first column is \`outcome\`: add one listing succeeded, cancelled`,
    ])
  })
})
