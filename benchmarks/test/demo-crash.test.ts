import { expect, it } from 'vitest'
import { runCrashDemo } from '../src/demo/crash.js'
import { accountHolds } from '../src/demo/crash-account.js'

it('the crash demo loses nothing acknowledged across a kill -9, and its account adds up', async () => {
  const lines: string[] = []
  const a = await runCrashDemo((line) => lines.push(line))
  const out = lines.join('\n')
  expect(a.acked).toBeGreaterThan(0)
  expect(a.acked).toBeLessThanOrEqual(a.posted)
  expect(a.recovered.queued + a.recovered.delayed + a.recovered.backingOff).toBeGreaterThan(0)
  expect(a.lostAcknowledged).toBe(0)
  expect(a.committedRanAgain).toBe(0)
  expect(a.more).toBe(0)
  expect(a.twice).toBe(a.twiceUncommitted)
  expect(a.once + a.twice).toBe(a.completed)
  expect(a.completed).toBe(a.acked + a.unacknowledgedRan)
  expect(a.unacknowledgedRan + a.unacknowledgedLost).toBe(a.posted - a.acked)
  expect(a.outOfOrder).toBe(0)
  expect(a.early).toBe(0)
  expect(accountHolds(a)).toBe(true)
  expect(out).toContain(`acknowledged ${a.acked.toLocaleString('en-US')}:`)
  expect(out).toContain('nothing acknowledged was lost, nothing committed ran again ✔')
  expect(out).not.toContain('✘')
}, 60_000)
