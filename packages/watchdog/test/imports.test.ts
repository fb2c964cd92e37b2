import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src')

/** Every relative import or re-export of every module under `dir`, type-only ones included. */
function importGraph(dir: string): Map<string, string[]> {
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'))
  const graph = new Map<string, string[]>()
  for (const file of files) {
    const text = readFileSync(join(dir, file), 'utf8')
    const targets = [...text.matchAll(/^(?:import|export)\b[^'"]*?from\s+'(\.[^']+)'/gms)].map((m) =>
      relative(dir, resolve(dirname(join(dir, file)), (m[1] as string).replace(/\.js$/, '.ts'))),
    )
    graph.set(file, targets)
  }
  return graph
}

/** The import cycles of `graph`, each as the list of modules around it. */
function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = []
  const state = new Map<string, 'open' | 'done'>()
  const path: string[] = []
  const visit = (node: string): void => {
    state.set(node, 'open')
    path.push(node)
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') found.push([...path.slice(path.indexOf(next)), next])
      else if (state.get(next) === undefined) visit(next)
    }
    path.pop()
    state.set(node, 'done')
  }
  for (const node of graph.keys()) if (state.get(node) === undefined) visit(node)
  return found
}

describe('@flowing/watchdog', () => {
  describe('modules', () => {
    it('import each other without a cycle, counting type-only imports', () => {
      const graph = importGraph(SRC)
      expect(cycles(graph)).toEqual([])
      expect(graph.get('internal/label.ts')).toEqual(['contracts.ts']) // the contracts are a leaf
    })
  })
})
