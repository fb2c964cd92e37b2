/**
 * `--threads`: the worker sweep once per thread count on a default `@flowing/threads` pool of that
 * size (real threads), the module told which, and the verdict over thread counts.
 */
import { setDefaultPool, ThreadPool, threaded } from '@flowing/threads'
import { describe, expect, it } from 'vitest'
import { parseArgs, resolveTuneOptions } from '../src/args.js'
import { TuneError } from '../src/errors.js'
import type { TunerModule } from '../src/module.js'
import { buildReport } from '../src/report.js'
import { type TuneRun, tune } from '../src/run.js'
import type { MeasuredPoint } from '../src/sweep.js'
import { judgeThreads, type ThreadsRun } from '../src/threads.js'

const CPU = new URL('./fixtures/cpu-thread.mjs', import.meta.url)

describe('flowing-tune --threads', () => {
  it('runs the worker sweep once per thread count, each on a default pool of that many threads', async () => {
    const trials: { threads: number | undefined; ids: Set<number> }[] = [] // the thread ids each trial ran on
    const told: (number | undefined)[] = []
    const mod: TunerModule<{ cpu: number }> = {
      register(loop, trial) {
        told.push(trial.threads)
        const ids = new Set<number>()
        trials.push({ threads: trial.threads, ids })
        const onThread = threaded<{ cpu: number }, 'cpu', number>(CPU)
        loop.on('cpu', async (message, ctx) => {
          ids.add(await onThread(message, ctx))
        })
      },
      sample: (i) => ({ type: 'cpu', payload: i }),
    }
    const before = new ThreadPool({ maxThreads: 1 })
    setDefaultPool(before)
    const lines: string[] = []
    // The verdict depends on the machine's noise (a curve still rising is withdrawn): judgeThreads is
    // tested on fixed points below; here, the sweep's mechanics.
    const run = await tune(
      {
        module: 'cpu-thread.mjs',
        workers: [2, 4],
        threads: [1, 2],
        durationMs: 250,
        warmupMs: 50,
        trials: 1,
        quiet: true,
        p99Ms: 10_000,
      },
      (text) => lines.push(text),
      mod as unknown as TunerModule,
    ).catch((error: unknown) => error)
    if (run instanceof TuneError) expect(run.code).toBe('ERR_FLOWING_TUNE_NO_RECOMMENDATION')
    else expect((run as TuneRun).threads?.runs.map((r) => r.threads)).toEqual([1, 2])
    expect(told).toEqual([1, 1, 1, 1, 2, 2, 2, 2]) // a warm-up and a trial per worker count
    // Never more threads than the count; the measured trials (each after its warm-up) use them all. A
    // trial's stop aborts its running attempts, which ends their threads: ids differ across trials.
    const sizes = (threads: number) => trials.filter((t) => t.threads === threads).map((t) => t.ids.size)
    expect(Math.max(...sizes(1), ...sizes(2).map((n) => n - 1))).toBe(1)
    expect(sizes(1).filter((_, i) => i % 2 === 1)).toEqual([1, 1])
    expect(sizes(2).filter((_, i) => i % 2 === 1)).toEqual([2, 2])
    expect(lines.join('\n')).toMatch(
      /## 1 thread\n[\s\S]*## 2 threads\n[\s\S]*## Threads\n[\s\S]*\| threads \| workers \|/,
    )
    expect(setDefaultPool(undefined)).toBe(before) // the default pool is put back
    await before.close()
  })

  it('picks the fewest threads within the tolerance of the best, and says when none qualifies', () => {
    const options = resolveTuneOptions({ module: 'm.js', threads: [1, 2, 4], tolerance: 0.05, p99Ms: 50 })
    const point = (workers: number, throughput: number, p99 = 10): MeasuredPoint => ({
      workers,
      throughput,
      p99,
      utilization: 0.3,
      lifecycleP50: 1,
      queueWaitP50: 0,
      queueWaitP99: 1,
      handlerP50: 1,
      eventLoopDelayP99: 2,
      failureRate: 0,
      refusedRate: 0,
      trialThroughputs: [throughput],
      trialP99s: [p99],
      logged: 0,
      firstLogged: undefined,
    })
    const run = (threads: number, points: MeasuredPoint[]): ThreadsRun => ({
      threads,
      points,
      report: buildReport(points, options),
    })
    const runs = [
      run(1, [point(1, 100), point(2, 110), point(4, 110)]),
      run(2, [point(1, 100), point(2, 205), point(4, 210)]),
      run(4, [point(1, 100), point(2, 208), point(4, 212)]),
    ]
    const verdict = judgeThreads(runs, options)
    expect([verdict.threads, verdict.workers]).toEqual([2, 2])
    expect(verdict.text).toMatch(/Recommendation: 2 threads and 2 workers/)
    const slow = [run(1, [point(1, 100, 90)]), run(2, [point(1, 200, 80)])]
    expect(judgeThreads(slow, options)).toMatchObject({ threads: undefined, workers: undefined })
    expect(judgeThreads(slow, options).text).toMatch(/No recommendation/)
  })

  it('parses --threads and refuses a bad list, naming the flag', () => {
    const command = parseArgs(['m.js', '--threads', '2,1,2'])
    expect(command.kind === 'tune' && command.options.threads).toEqual([1, 2])
    expect(() => parseArgs(['m.js', '--threads', '0,2'])).toThrow(
      /Expected `--threads` to be a comma-separated list of integers from 1 to 256, got `0,2`/,
    )
    expect(() => resolveTuneOptions({ module: 'm.js', threads: [1.5] })).toThrow(/--threads/)
  })
})
