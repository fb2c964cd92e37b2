import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { CORE_LAYERS, layerViolations, main, rankOf } from '../check-layers.js'
import { tempCores } from './temp-core.js'

const core = tempCores('flowing-layers-')

describe('check-layers', () => {
  describe('rankOf()', () => {
    it('ranks contracts < leaves < stages < engine < front', () => {
      const ranks = [
        'contracts/store.ts',
        'queue/run-queue.ts',
        'admission/admission.ts',
        'engine/engine.ts',
        'index.ts',
      ]
      expect(ranks.map((path) => rankOf(path))).toEqual([0, 1, 2, 3, 4])
      expect(CORE_LAYERS.map((layer) => layer.name)).toEqual(['contracts', 'leaves', 'stages', 'engine', 'front'])
    })

    it('places no file it does not know', () => {
      expect(rankOf('somewhere/new.ts')).toBe(-1)
      expect(rankOf('errors.ts.bak')).toBe(-1)
    })
  })

  describe('layerViolations()', () => {
    it('refuses a contract that imports an implementation, even for types only', () => {
      const root = core({
        'contracts/options.ts':
          "import type { RunQueue } from '../queue/run-queue.js'\nexport type O = { q: RunQueue }",
        'queue/run-queue.ts': 'export class RunQueue {}',
      })
      expect(layerViolations(root)).toEqual([
        {
          from: 'contracts/options.ts',
          to: 'queue/run-queue.ts',
          why: 'imports upwards (contracts → leaves), types only',
        },
      ])
    })

    it('refuses a stage that imports the engine or the front, and an unplaced file', () => {
      const root = core({
        'admission/admission.ts': "import { Engine } from '../engine/engine.js'\nexport const a = Engine",
        'engine/engine.ts': "import { Loop } from '../loop/loop.js'\nexport const Engine = Loop",
        'loop/loop.ts': 'export class Loop {}',
        'stray/thing.ts': 'export const t = 1',
      })
      expect(layerViolations(root).map((v) => `${v.from} ${v.to ?? ''} ${v.why}`)).toEqual([
        'admission/admission.ts engine/engine.ts imports upwards (stages → engine)',
        'engine/engine.ts loop/loop.ts imports upwards (engine → front)',
        'stray/thing.ts  is in no layer: add its folder to CORE_LAYERS in scripts/check-layers.ts',
      ])
    })

    it('allows imports downwards and within a layer', () => {
      const root = core({
        'loop/loop.ts': "import { Engine } from '../engine/engine.js'\nexport const Loop = Engine",
        'engine/engine.ts': "import { a } from '../admission/admission.js'\nexport const Engine = a",
        'admission/admission.ts': "import { f } from '../failure/f.js'\nexport const a = f",
        'failure/f.ts': "import type { O } from '../contracts/options.js'\nexport const f = 1 as unknown as O",
        'contracts/options.ts': "import type { E } from '../errors.js'\nexport type O = E",
        'errors.ts': 'export type E = Error',
      })
      expect(layerViolations(root)).toEqual([])
    })
  })

  describe('main()', () => {
    it('passes on this repository', () => {
      const lines: string[] = []
      const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
      expect(main(repo, (line) => lines.push(line))).toBe(0)
      expect(lines).toEqual([])
    })
  })
})
