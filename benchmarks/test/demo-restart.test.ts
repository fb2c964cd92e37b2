import { expect, it } from 'vitest'
import { runRestartDemo } from '../src/demo/restart.js'

it('the restart demo charges every order exactly once across the stop and the restore', async () => {
  const lines: string[] = []
  await runRestartDemo((line) => lines.push(line))
  const out = lines.join('\n')
  expect(out).toContain('a producer re-sends o-7 while it is queued: duplicate')
  expect(out).toMatch(/handed back \(/)
  expect(out).toContain('orders charged: 3000 of 3000, each exactly once ✔')
}, 20_000)
