/**
 * The child process of `exit-after-stop.test.ts` (not a test itself): a loop on the real clock whose
 * one worker is taken by a handler that times out and never settles, while a second message waits
 * (so the stall check is armed too). It prints `stopped` once `stop()` resolved and then does nothing:
 * the process should exit at once, held by no loop timer.
 *
 * Run: `node --conditions=@flowing/source --import tsx exit-after-stop-child.ts`
 */
import { createLoop } from '../../src/index.js'

const loop = createLoop<{ work: number }>({ workers: 1, timeoutMs: 20, graceMs: 5_000, logger: false })
loop.on('work', () => new Promise<void>(() => {})) // a call that never returns (and holds no handle)
const timedOut = new Promise<void>((resolve) => loop.events.once('failed', () => resolve()))
loop.post('work', 1)
loop.post('work', 2)
await timedOut
await loop.stop({ drain: false })
process.stdout.write('stopped\n')
