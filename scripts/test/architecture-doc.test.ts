import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { checkPage, listSource, PAGE, parseTree, staleCitations, treeProblems } from '../architecture-doc.js'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')
const source = {
  folders: ['contracts/', 'engine/', 'queue/'],
  files: ['clock.ts', 'contracts/store.ts', 'engine/engine.ts', 'index.ts', 'queue/run-queue.ts', 'queue/urgency.ts'],
}

// A page whose tree is `lines` (each entry two spaces in).
const page = (...lines: string[]): string =>
  ['# A page', '', '```text', 'packages/core/src/', ...lines, '```', ''].join('\n')

const good = [
  '  index.ts (the only barrel)                                    front',
  '  engine/     engine.ts (the composition root, which builds     engine',
  '              the stages)',
  '  queue/      run-queue.ts (what waits) · urgency               leaves',
  '  clock.ts',
  '  contracts/  store                                             contracts',
]

describe('docs/architecture.md', () => {
  it('names every folder and .ts file of packages/core/src, and nothing else, each under its CORE_LAYERS label', () => {
    expect(checkPage(root)).toEqual([])
  })

  it('cites only files of packages/core/src that exist, as do the design notes written relative to it', () => {
    const core = listSource(join(root, 'packages/core/src'))
    const notes = readdirSync(join(root, 'docs/design')).map((f) => `docs/design/${f}`)
    const stale = [PAGE, ...notes]
      .map((path) => [path, readFileSync(join(root, path), 'utf8')] as const)
      .filter(([, text]) => text.includes('packages/core/src/'))
      .flatMap(([path, text]) => staleCitations(text, core).map((p) => `${path} ${p}`))
    expect(stale).toEqual([])
  })

  it('has a section on the contracts and the layer rule, flow control, the autoscaler, request and cancel, the journal', () => {
    const text = readFileSync(join(root, PAGE), 'utf8')
    const sections = [
      ['## Contracts and the layer rule', 'scripts/check-layers.ts'],
      ['## Flow control: rate limits and key groups', 'limits/rate-limits.ts', 'queue/key-groups.ts'],
      ['## The autoscaler', 'pool/autoscaler.ts'],
      ['## Request and cancel', 'requests/requests.ts', 'requests/cancels.ts'],
      ['## The journal', 'journal/journal.ts', 'design/journal.md'],
    ]
    for (const [heading = '', ...files] of sections) {
      const start = text.indexOf(`\n${heading}\n`)
      expect(start, heading).toBeGreaterThan(0)
      const body = text.slice(start + heading.length + 2, text.indexOf('\n## ', start + 1))
      for (const file of files) expect(body, `${heading} cites ${file}`).toContain(file)
    }
  })
})

describe('the tree check', () => {
  it('passes a tree that names everything once, with names without .ts and glosses over two lines', () => {
    expect(parseTree(page(...good)).entries.map((e) => [e.folder, e.names, e.layer])).toEqual([
      ['', ['index.ts'], 'front'],
      ['engine/', ['engine.ts'], 'engine'],
      ['queue/', ['run-queue.ts', 'urgency'], 'leaves'],
      ['', ['clock.ts'], 'leaves'],
      ['contracts/', ['store'], 'contracts'],
    ])
    expect(treeProblems(parseTree(page(...good)), source)).toEqual([])
  })

  it('says which file to add to which entry, and which folder to add under which label', () => {
    const missing = {
      folders: [...source.folders, 'timers/'],
      files: [...source.files, 'queue/ring.ts', 'timers/delayed.ts', 'headers.ts'],
    }
    expect(treeProblems(parseTree(page(...good)), missing)).toEqual([
      `${PAGE}: \`timers/\` is not in the tree: add \`  timers/  delayed.ts\` under the label \`leaves\``,
      `${PAGE}: \`queue/ring.ts\` is not named in the tree: add \`ring.ts (what it is)\` to the \`queue/\` entry`,
      `${PAGE}: \`headers.ts\` is not named in the tree: add \`headers.ts (what it is)\` to a root line under the label \`leaves\``,
    ])
  })

  it('says which name to remove: a file or a folder that does not exist', () => {
    const stale = [
      ...good,
      '  timers/     delayed-posts.ts',
      '  errors.ts                                                     contracts',
    ]
    const lines = [...good]
    lines[3] = '  queue/      run-queue.ts (what waits) · urgency · ring        leaves'
    expect(treeProblems(parseTree(page(...lines, ...stale.slice(good.length))), source)).toEqual([
      `${PAGE}:8: names \`queue/ring.ts\`, which does not exist: remove it from the \`queue/\` entry`,
      `${PAGE}:11: names the folder \`timers/\`, which packages/core/src/ does not have: remove its entry`,
      `${PAGE}:12: names \`errors.ts\`, which does not exist: remove it from its line`,
    ])
  })

  it('fails a folder or root file whose label disagrees with CORE_LAYERS, or that has none', () => {
    const lines = [...good]
    lines[1] = '  engine/     engine.ts (the composition root, which builds     stages'
    const unlabelled = ['  engine/     engine.ts', '  clock.ts', ...good.slice(0, 1), ...good.slice(3)]
    expect(treeProblems(parseTree(page(...lines)), source)).toEqual([
      `${PAGE}:6: \`engine/\` is under the label \`stages\`, but CORE_LAYERS (scripts/check-layers.ts) puts it in \`engine\`: move it there`,
    ])
    expect(treeProblems(parseTree(page(...unlabelled)), source).slice(0, 2)).toEqual([
      `${PAGE}:5: \`engine/\` has no layer label above it, but CORE_LAYERS (scripts/check-layers.ts) puts it in \`engine\`: move it there`,
      `${PAGE}:6: \`clock.ts\` has no layer label above it, but CORE_LAYERS (scripts/check-layers.ts) puts it in \`leaves\`: move it there`,
    ])
  })

  it('fails an entry that is not `name (gloss) · name`, a folder named twice, and a page without the tree', () => {
    const lines = [...good, '  queue/      more', '  clock.ts  headers.ts']
    expect(treeProblems(parseTree(page(...lines)), source)).toEqual([
      `${PAGE}:12: cannot read \`clock.ts  headers.ts\` as \`file.ts (what it is)\``,
      `${PAGE}:11: \`queue/\` has a second entry: merge it into the first`,
      `${PAGE}:11: \`queue/\` is under the label \`contracts\`, but CORE_LAYERS (scripts/check-layers.ts) puts it in \`leaves\`: move it there`,
      `${PAGE}:11: names \`queue/more.ts\`, which does not exist: remove it from the \`queue/\` entry`,
    ])
    expect(parseTree('# no tree').problems).toEqual([
      `${PAGE} has no \`\`\`text block starting with packages/core/src/`,
    ])
  })

  it('finds a cited core file that does not exist, and leaves other paths alone', () => {
    const text = 'See `queue/run-queue.ts`, `queue/gone.ts`, `scripts/check-layers.ts` and `src/wheel.ts`.\n'
    expect(staleCitations(text, source)).toEqual([
      'line 1: cites `queue/gone.ts`, which packages/core/src/ does not have',
    ])
  })
})
