import { expect, it } from 'vitest'
import { runThreadsDemo } from '../src/demo/threads.js'

it('the threads demo renders every invoice both ways and stops the runaway at its deadline', async () => {
  const lines: string[] = []
  await runThreadsDemo((line) => lines.push(line))
  const out = lines.join('\n')
  expect(out).toMatch(/in the loop: +40 invoices rendered/)
  expect(out).toMatch(/on threads: +40 invoices rendered on [12] of [12] threads?/)
  expect(out).toContain('inv-bad timed out at its 300 ms deadline: its thread was terminated and replaced')
  expect(out).toMatch(/pool: +1 thread now|pool: +2 threads now/)
}, 30_000)
