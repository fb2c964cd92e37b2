/**
 * What a refused `tryPost` costs: full (`reject` policy at capacity), shed (backpressure at its shed
 * level, a low priority), duplicate (an idempotency key in flight) and stopped — against `post()` that
 * throws the same refusal (the cost of building an `Error`). Target: ≤ 1 µs per refused `tryPost`.
 */
import { createLoop, type Loop, Priority } from '@flowing/core'

/** One refusal path's figures. */
export interface RefusalFigure {
  readonly path: 'full' | 'shed' | 'duplicate' | 'stopped'
  /** ns per refused `tryPost` (the result's `error` never read). */
  readonly tryPostNs: number
  /** ns per refused `post` (throws, caught). */
  readonly postNs: number
}

type Messages = { job: number }

// A loop in the state that refuses `path`, and the options that make a post hit it.
async function refusingLoop(path: RefusalFigure['path']): Promise<{ loop: Loop<Messages>; options: object }> {
  const loop = createLoop<Messages>({
    capacity: 1_000,
    autoStart: false,
    logger: false,
    overflow: 'reject',
    backpressure: path === 'shed',
  })
  loop.on('job', () => {})
  if (path === 'duplicate') {
    loop.post('job', 0, { idempotencyKey: 'k' })
    return { loop, options: { idempotencyKey: 'k' } }
  }
  if (path === 'stopped') {
    await loop.stop()
    return { loop, options: {} }
  }
  const fill = path === 'shed' ? 850 : 1_000
  for (let i = 0; i < fill; i++) loop.post('job', i, { priority: Priority.critical })
  return { loop, options: { priority: Priority.low } }
}

function time(calls: number, runs: number, fn: () => void): number {
  const timings: number[] = []
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now()
    for (let i = 0; i < calls; i++) fn()
    timings.push(((performance.now() - t0) * 1e6) / calls)
  }
  timings.sort((a, b) => a - b)
  return timings[Math.floor(runs / 2)] as number
}

/** Median of `runs` timings of `calls` refusals per path; checks every one was refused. */
export async function measureRefusals(calls: number, runs: number): Promise<RefusalFigure[]> {
  const figures: RefusalFigure[] = []
  for (const path of ['full', 'shed', 'duplicate', 'stopped'] as const) {
    const { loop, options } = await refusingLoop(path)
    let refused = 0
    const tryPostNs = time(calls, runs, () => {
      if (!loop.tryPost('job', 1, options).ok) refused++
    })
    const postNs = time(Math.ceil(calls / 10), runs, () => {
      try {
        loop.post('job', 1, options)
      } catch {
        refused++
      }
    })
    const expected = runs * (calls + Math.ceil(calls / 10))
    if (refused !== expected) throw new Error(`${path}: ${refused} of ${expected} posts refused`)
    figures.push({ path, tryPostNs, postNs })
    if (loop.state !== 'stopped') await loop.stop({ drain: false })
  }
  return figures
}
