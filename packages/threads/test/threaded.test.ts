/**
 * Threaded handlers on real worker threads (no mocks): results, errors and their classes across the
 * hop, deadlines that terminate a runaway thread, a thread that dies, commit points and follow-ups
 * through the loop, bad modules and options.
 */
import {
  createLoop,
  HandlerTimeoutError,
  InvalidArgumentError,
  type LoopOptions,
  NonRetryableError,
  RetryableError,
} from '@flowing/core'
import { afterAll, describe, expect, it, vi } from 'vitest'
import {
  setDefaultPool,
  ThreadCrashedError,
  ThreadModuleError,
  ThreadPool,
  threaded,
  UncloneablePayloadError,
} from '../src/index.js'

interface Jobs {
  hash: { seed: number; rounds: number }
  fail: { kind: string; value?: unknown }
  spin: null
  exit: null
  steps: null
  next: { from: string }
  resumes: string
  double: number
  nothing: null
}

// The tests' threads must not inherit vitest's `--conditions` (they would load core's TypeScript sources).
const pool = new ThreadPool({ maxThreads: 2, execArgv: [] })
const WORK = new URL('./fixtures/work.mjs', import.meta.url)
const on = <T extends keyof Jobs>(name: string) => threaded<Jobs, T>(WORK, { pool, export: name })

afterAll(() => pool.close())

/** What `promise` rejected with (undefined when it resolved). */
const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (e: unknown) => e,
  )

function loopOf(options: LoopOptions = {}) {
  return createLoop<Jobs>({ logger: false, retry: { maxAttempts: 2, baseMs: 1, jitter: 0 }, ...options })
}

describe('threaded()', () => {
  it('runs an ESM default export and a CommonJS module on a thread; request() gets the result', async () => {
    const loop = loopOf()
    loop.on('hash', threaded(WORK, { pool }))
    loop.on('double', threaded(new URL('./fixtures/double.cjs', import.meta.url), { pool }))
    expect(await loop.request('hash', { seed: 1, rounds: 1 })).toMatch(/^[0-9a-f]{64}$/)
    expect(await loop.request('double', 21)).toBe(42)
    await loop.stop()
  })

  it('shows its threads and the run and wait times of its tasks', async () => {
    const own = new ThreadPool({ maxThreads: 1, execArgv: [] })
    const loop = loopOf()
    loop.on('hash', threaded(WORK, { pool: own }))
    await Promise.all([1, 2, 3].map((seed) => loop.request('hash', { seed, rounds: 2_000 })))
    const stats = own.stats()
    expect(stats.threads).toBe(1)
    expect(stats.queued).toBe(0)
    expect(stats.runTime.p50).toBeGreaterThan(0)
    expect(stats.runTime.max).toBeGreaterThanOrEqual(stats.runTime.p50)
    expect(stats.waitTime.max).toBeGreaterThanOrEqual(0)
    expect(stats.utilization).toBeGreaterThan(0)
    await loop.stop()
    await own.close()
  })

  it('brings errors back as their classes, with message, stack, cause and fields', async () => {
    const loop = loopOf()
    loop.on('fail', on('fail'))
    const failed = (payload: Jobs['fail']) => rejection(loop.request('fail', payload))
    const retryable = (await failed({ kind: 'retryable' })) as RetryableError & { status: number }
    expect(retryable).toBeInstanceOf(RetryableError)
    expect([retryable.message, retryable.status, (retryable.cause as Error).message]).toEqual([
      'try again',
      503,
      'downstream said no',
    ])
    expect(retryable.stack).toContain('work.mjs')
    expect(await failed({ kind: 'non-retryable' })).toBeInstanceOf(NonRetryableError)
    const custom = (await failed({ kind: 'custom' })) as Error & { quota: number }
    expect([custom.name, custom.message, custom.quota]).toEqual(['QuotaError', 'over quota', 7])
    expect(await failed({ kind: 'value', value: { not: 'an error' } })).toEqual({ not: 'an error' })
    await loop.stop()
  })

  it('retries a RetryableError under the policy and dead-letters a NonRetryableError at once', async () => {
    const loop = loopOf()
    loop.on('fail', on('fail'))
    loop.post('fail', { kind: 'retryable' })
    loop.post('fail', { kind: 'non-retryable' })
    await loop.drain()
    const letters = loop.deadLetters.list()
    expect(letters.map((l) => [l.reason, l.attempts.length])).toEqual([
      ['exhausted', 2],
      ['non-retryable', 1],
    ])
    await loop.stop()
  })

  it('pauses on a RateLimitError from the thread with its retry-after and scope', async () => {
    const loop = loopOf()
    loop.on('fail', on('fail'))
    const held = new Promise<unknown>((resolve) => {
      loop.events.on('rate-limited', (_m, hold) => resolve([hold.scope, hold.retryAfterScope]))
    })
    loop.post('fail', { kind: 'rate' }, { key: 'k' })
    expect(await held).toEqual(['retry-after', 'key'])
    expect(loop.metrics().counters.retried).toBe(0) // a 429 consumes no attempt
    await loop.stop({ drain: false })
  })

  it('stops a spinning handler at its deadline, exactly once: its thread is terminated and replaced', async () => {
    // One thread: the next message can run only if the spinning one's thread was really ended.
    const single = new ThreadPool({ maxThreads: 1, execArgv: [] })
    const loop = loopOf({ workers: 2 })
    loop.on('spin', threaded(WORK, { pool: single, export: 'spin' }), { timeoutMs: 300, retry: { maxAttempts: 1 } })
    loop.on('hash', threaded(WORK, { pool: single }))
    const failed: string[] = []
    loop.events.on('failed', (m, error) => failed.push(`${m.type} ${(error as Error).name}`))
    loop.post('spin', null)
    expect(await loop.request('hash', { seed: 2, rounds: 1 })).toMatch(/^[0-9a-f]{64}$/)
    expect(failed).toEqual(['spin HandlerTimeoutError'])
    expect(loop.metrics().counters.timedOut).toBe(1)
    await loop.stop()
    await single.close()
  })

  it('fails only its own attempt when its thread dies, with a typed error; the pool heals', async () => {
    const loop = loopOf()
    loop.on('exit', on('exit'), { retry: { maxAttempts: 1 } })
    loop.on('hash', threaded(WORK, { pool }))
    const error = await rejection(loop.request('exit', null))
    expect(error).toBeInstanceOf(ThreadCrashedError)
    expect((error as Error).message).toMatch(/work\.mjs died/)
    expect(await loop.request('hash', { seed: 3, rounds: 1 })).toMatch(/^[0-9a-f]{64}$/)
    await loop.stop()
  })

  it('fails only its own attempt when its thread runs out of memory under resourceLimits', async () => {
    const small = new ThreadPool({ maxThreads: 1, execArgv: [], resourceLimits: { maxOldGenerationSizeMb: 32 } })
    const loop = loopOf()
    loop.on('exit', threaded(WORK, { pool: small, export: 'hog' }), { retry: { maxAttempts: 1 } })
    loop.on('hash', threaded(WORK, { pool: small }))
    const error = await rejection(loop.request('exit', null))
    expect(error).toBeInstanceOf(ThreadCrashedError)
    expect(await loop.request('hash', { seed: 4, rounds: 1 })).toMatch(/^[0-9a-f]{64}$/)
    await loop.stop()
    await small.close()
  })

  it('records commit points and posts follow-ups through the loop, in order', async () => {
    const loop = loopOf()
    loop.on('steps', on('steps'))
    const next: unknown[] = []
    loop.on('next', (m) => {
      next.push(m.payload)
    })
    const committed: unknown[] = []
    loop.events.on('committed', (_m, checkpoint) => committed.push(checkpoint))
    const m = loop.post('steps', null, { key: 'k1', headers: { tenant: 't1' } })
    await loop.drain()
    expect(committed).toEqual([{ step: 1 }])
    expect(next).toEqual([{ from: m.id }])
    await loop.stop()
  })

  it('resumes a retry after the commit point its first attempt made on a thread', async () => {
    const loop = loopOf()
    loop.on('resumes', on('resumes'))
    expect(await loop.request('resumes', 'charge-7')).toEqual({ charged: 'charge-7' })
    await loop.stop()
  })

  it('keeps a commit point made just before its thread was terminated (deadline) or died (exit)', async () => {
    // A fresh thread loading work.mjs (and @flowing/core) takes ~0.2 s here: the deadline leaves room.
    const loop = loopOf({ timeoutMs: 1_500 })
    loop.on('resumes', on('commitThenHang'))
    const [hung, exited] = await Promise.all([loop.request('resumes', 'spin'), loop.request('resumes', 'exit')])
    expect(hung).toEqual({ step: 1, of: 'spin' })
    expect(exited).toEqual({ step: 1, of: 'exit' })
    expect(loop.metrics().counters.timedOut).toBe(1)
    await loop.stop()
  })

  it('starts loading the modules its pool used in a replacement thread, before any task reaches it', async () => {
    const loads = new BroadcastChannel('flowing-threads-test-loads')
    const loaded: number[] = []
    loads.onmessage = (event) => loaded.push((event as { data: number }).data)
    const single = new ThreadPool({ minThreads: 1, maxThreads: 1, execArgv: [] })
    const loop = loopOf({ timeoutMs: 300, retry: { maxAttempts: 1 } })
    loop.on('spin', threaded(new URL('./fixtures/announce.mjs', import.meta.url), { pool: single, export: 'spin' }))
    expect(await rejection(loop.request('spin', null))).toBeInstanceOf(HandlerTimeoutError)
    // The spinning thread was terminated; its replacement loads announce.mjs with no task sent to it.
    await vi.waitFor(() => expect(new Set(loaded).size).toBeGreaterThanOrEqual(3), { timeout: 10_000 })
    loads.close()
    await loop.stop()
    await single.close()
  }, 15_000)

  it('refuses a payload that cannot cross when it is posted, typed and counted', async () => {
    const loop = loopOf()
    loop.on('hash', threaded(WORK, { pool }))
    const uncloneable = { seed: 1, rounds: 1, f: () => 1 } as unknown as Jobs['hash']
    expect(() => loop.post('hash', uncloneable)).toThrow(UncloneablePayloadError)
    expect(() => loop.post('hash', uncloneable)).toThrow(/payload\.f cannot cross between the loop and a worker thread/)
    expect(await rejection(loop.request('hash', uncloneable))).toBeInstanceOf(UncloneablePayloadError)
    const nested = { seed: 1, rounds: 1, m: new Map([['k', [Symbol('s')]]]) } as unknown as Jobs['hash']
    expect(() => loop.post('hash', nested)).toThrow(/payload\.m\[1\]\.0 cannot cross/)
    const { posted, accepted, rejected } = loop.metrics().counters
    expect([posted, accepted, rejected]).toEqual([4, 0, 4])
    await loop.stop()
  })

  it('refuses a result that cannot come back as UncloneablePayloadError, not retried', async () => {
    const loop = loopOf()
    loop.on('nothing', on('uncloneableResult'))
    const error = await rejection(loop.request('nothing', null))
    expect(error).toBeInstanceOf(UncloneablePayloadError)
    expect((error as Error).message).toMatch(/the result of .*work\.mjs cannot cross/)
    expect(loop.metrics().counters.retried).toBe(0)
    await loop.stop()
  })

  it('refuses at registration, typed and naming it: a missing module, one that fails to load, a missing or non-function export', () => {
    const refusal = (make: () => unknown) => {
      try {
        make()
      } catch (error) {
        return error as ThreadModuleError
      }
      throw new Error('not refused')
    }
    const fixture = (name: string) => new URL(`./fixtures/${name}`, import.meta.url)
    const cases = [
      [() => threaded(fixture('nowhere.mjs')), /nowhere\.mjs: no such file/],
      [
        () => threaded(fixture('throws-on-load.mjs'), { pool }),
        /throws-on-load\.mjs: it could not be loaded: no config at load time/,
      ],
      [
        () => threaded(fixture('exits-on-load.mjs'), { pool }),
        /exits-on-load\.mjs: it could not be loaded: .*ended the thread/,
      ],
      [
        () => threaded(WORK, { pool, export: 'notAFunction' }),
        /work\.mjs: its export `notAFunction` is number, not a function/,
      ],
      [() => threaded(WORK, { pool, export: 'nowhere' }), /work\.mjs: its export `nowhere` is not exported/],
      [
        () => threaded(fixture('double.cjs'), { pool, export: 'nope' }),
        /double\.cjs: its export `nope` is not exported/,
      ],
    ] as const
    for (const [make, message] of cases) {
      const error = refusal(make)
      expect(error).toBeInstanceOf(ThreadModuleError)
      expect(error.code).toBe('ERR_FLOWING_THREAD_MODULE')
      expect(error.message).toMatch(message)
    }
    expect(() => threaded('relative/path.mjs')).toThrow(InvalidArgumentError)
  })

  it('fails the first attempt, not retried, when the module loads differently on the pool’s threads', async () => {
    const loop = loopOf()
    loop.on('nothing', on('shifty'))
    const error = await rejection(loop.request('nothing', null))
    expect(error).toBeInstanceOf(ThreadModuleError)
    expect((error as Error).message).toMatch(/`shifty` is number, not a function/)
    expect(loop.metrics().counters.retried).toBe(0)
    await loop.stop()
  })

  it('runs the default export of CommonJS compiled from TypeScript (exports.default)', async () => {
    const loop = loopOf()
    loop.on('double', threaded(new URL('./fixtures/ts-compiled.cjs', import.meta.url), { pool }))
    expect(await loop.request('double', 41)).toBe(42)
    await loop.stop()
  })

  it('fails the attempt with a transfer callback’s own error, and leaves nothing open', async () => {
    const loop = loopOf({ retry: { maxAttempts: 1 } })
    const broken = new TypeError('no buffer here')
    loop.on(
      'hash',
      threaded(WORK, {
        pool,
        transfer: () => {
          throw broken
        },
      }),
    )
    expect(await rejection(loop.request('hash', { seed: 1, rounds: 1 }))).toBe(broken)
    await loop.stop()
  })

  it('applies nothing after a follow-up the loop refused: the commit that followed it is not made', async () => {
    const loop = loopOf({ retry: { maxAttempts: 1 } })
    loop.on('steps', on('postThenCommit'))
    const committed: unknown[] = []
    loop.events.on('committed', (_m, checkpoint) => committed.push(checkpoint))
    const error = await rejection(loop.request('steps', null))
    expect((error as Error).name).toBe('UnknownMessageTypeError')
    expect(committed).toEqual([])
    await loop.stop()
  })

  it('keeps its own class name for an error it rebuilt, and a plain error for one it cannot', async () => {
    const loop = loopOf({ retry: { maxAttempts: 1 } })
    loop.on('nothing', on('shifty'))
    loop.on('fail', on('badRateLimit'))
    loop.on('exit', on('unreadableError'))
    expect(((await rejection(loop.request('nothing', null))) as Error).name).toBe('ThreadModuleError')
    const bad = (await rejection(loop.request('fail', { kind: 'x' }))) as Error & { retryAfterMs: unknown }
    expect([bad.constructor, bad.message, bad.retryAfterMs]).toEqual([Error, 'slow down, badly', '5'])
    const unreadable = (await rejection(loop.request('exit', null))) as Error
    expect(unreadable).not.toBeInstanceOf(ThreadCrashedError) // the thread is fine
    expect(unreadable.message).toMatch(/cannot be read/)
    await loop.stop()
  })

  it('refuses options with typos and wrong types, typed, naming the option', () => {
    expect(() => threaded(WORK, { exprot: 'x' } as never)).toThrow(/options\.exprot.*did you mean `export`/)
    expect(() => threaded(WORK, { pool: {} as never })).toThrow(InvalidArgumentError)
    expect(() => new ThreadPool({ maxThreads: 0 })).toThrow(InvalidArgumentError)
    expect(() => new ThreadPool({ maxTreads: 2 } as never)).toThrow(/did you mean `maxThreads`/)
    // The default pool: only a ThreadPool (of any copy of the package), and nothing replaced on refusal.
    const before = setDefaultPool(pool)
    expect(() => setDefaultPool({ run() {} } as never)).toThrow(InvalidArgumentError)
    expect(setDefaultPool(before)).toBe(pool)
  })
})
