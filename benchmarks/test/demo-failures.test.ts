import { expect, it } from 'vitest'
import { runFailuresDemo } from '../src/demo/failures.js'

it('the failures demo balances I1, keeps per-account order, opens and closes the breaker', async () => {
  const lines: string[] = []
  await runFailuresDemo((line) => lines.push(line), { durationMs: 900, outage: [300, 600], ratePerSecond: 400 })
  const out = lines.join('\n')
  expect(out).toContain('closed → open')
  expect(out).toContain('half-open → closed')
  expect(out).toMatch(
    /accepted \d+ = succeeded \d+ \+ dead-lettered \d+ \+ dropped 0 \+ cancelled 0 \+ snapshotted 0 {2}✔/,
  )
  expect(out).toContain('per-account order of successful syncs = post order  ✔')
  expect(out).not.toContain('✘')
}, 20_000)
