/**
 * Keyed delays across the processes of one NATS loop (two loops of one name on a private server, each on
 * its own connection): a message posted with a job key in one process is found, cancelled and replaced
 * from the other until it starts — while delayed, and once due while it waits behind its busy key.
 */
import { InvalidArgumentError } from '@flowing/core'
import { afterEach, expect, it } from 'vitest'
import { createNatsLoop, type NatsLoop } from '../src/index.js'
import { describeNats, useNatsServer } from './server.js'
import { until } from './until.js'

// Resolves once `done()` resolves true (checked every 50 ms).
async function eventually(done: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  for (const end = Date.now() + ms; !(await done()); await new Promise((r) => setTimeout(r, 50))) {
    if (Date.now() > end) throw new Error(`${what}: not done in ${ms} ms`)
  }
}

interface Messages {
  timeout: { order: string; v: number }
  busy: { ms: number }
}

describeNats('job keys shared by the processes of a NATS loop', () => {
  const server = useNatsServer()
  const open: NatsLoop<Messages>[] = []
  let names = 0
  afterEach(async () => {
    await Promise.all(open.splice(0).map((l) => l.stop({ deadlineMs: 0 })))
  })
  const pair = async (ran: number[]) => {
    const name = `jobs${names++}`
    const make = async () => {
      const loop = await createNatsLoop<Messages>({
        servers: server().url,
        name,
        partitions: 4,
        loop: { logger: false },
      })
      open.push(loop)
      loop.on('timeout', (m) => {
        ran.push(m.payload.v)
      })
      loop.on('busy', (m) => new Promise((r) => setTimeout(r, m.payload.ms)))
      await loop.start()
      return loop
    }
    return [await make(), await make()] as const
  }

  it('cancels from one process what another posted, and replaces it from there', async () => {
    const ran: number[] = []
    const [a, b] = await pair(ran)
    await a.postDelayed('timeout', { order: 'o-1', v: 1 }, 800, { jobKey: 'timeout:o-1' })
    expect(await b.jobs.get('timeout:o-1')).toMatchObject({ state: 'waiting' })
    expect(await b.jobs.cancel('timeout:o-1')).toBe('cancelled')
    expect(await b.jobs.cancel('timeout:o-1')).toBe('unknown')
    await a.postDelayed('timeout', { order: 'o-2', v: 2 }, 600, { jobKey: 'timeout:o-2' })
    await b.postDelayed('timeout', { order: 'o-2', v: 3 }, 900, { jobKey: 'timeout:o-2' }) // replaces v 2
    await a.postDelayed('timeout', { order: 'o-3', v: 4 }, 300, { jobKey: 'timeout:o-3' })
    await b.post('timeout', { order: 'o-3', v: 5 }, { jobKey: 'timeout:o-3', jobKeyMode: 'preserve_run_at' })
    await until(() => ran.length >= 2, 20_000, 'the last posts run')
    await new Promise((r) => setTimeout(r, 1_500)) // the cancelled and replaced ones came due meanwhile
    expect(ran.sort()).toEqual([3, 5])
    expect(await a.jobs.get('timeout:o-2')).toBeUndefined() // its message ran: the key is free
  }, 60_000)

  it('cancels a due message waiting behind its busy key: it is acknowledged without running', async () => {
    const ran: number[] = []
    const [a, b] = await pair(ran)
    await a.post('busy', { ms: 5_000 }, { key: 'order-9' })
    await a.postDelayed('timeout', { order: 'order-9', v: 9 }, 200, { key: 'order-9', jobKey: 'pay:order-9' })
    // Due, moved into its partition, waiting behind the busy key (two messages in the work stream).
    await eventually(async () => (await a.fill()).messages >= 2, 20_000, 'the timeout in its partition')
    expect(await b.jobs.cancel('pay:order-9')).toBe('cancelled')
    await eventually(async () => (await a.fill()).messages === 0, 20_000, 'the partition empty')
    expect(ran).toEqual([])
    expect(a.metrics().jobsSkipped + b.metrics().jobsSkipped).toBe(1)
  }, 60_000)

  it("says 'started' once it runs, and refuses bad job options", async () => {
    const ran: number[] = []
    const [a, b] = await pair(ran)
    const said: string[] = []
    const running = async () => {
      said.push(await b.jobs.cancel('long'))
    }
    a.on('busy', running, { replace: true })
    b.on('busy', running, { replace: true })
    await a.post('busy', { ms: 0 }, { jobKey: 'long' })
    await eventually(async () => said.length === 1 && (await a.jobs.get('long')) === undefined, 20_000, 'the key freed')
    expect(said).toEqual(['started'])
    await expect(a.post('timeout', { order: 'x', v: 1 }, { jobKey: '' })).rejects.toThrow(InvalidArgumentError)
    await expect(
      a.post('timeout', { order: 'x', v: 1 }, { jobKey: 'k', jobKeyMode: 'later' as never }),
    ).rejects.toThrow(/options\.jobKeyMode/)
    await expect(a.post('timeout', { order: 'x', v: 1 }, { jobKey: 'k', maxWaitMs: 5 })).rejects.toThrow(/maxWaitMs/)
  }, 60_000)

  it("runs a keyed message's follow-ups (they are not its job), and frees the key of one dead-lettered", async () => {
    const ran: number[] = []
    const [a, b] = await pair(ran)
    const children: number[] = []
    let calls = 0
    for (const loop of [a, b]) {
      loop.on(
        'busy',
        (m, ctx) => {
          if (m.payload.ms > 0) {
            calls++
            throw new Error('always')
          }
          ctx.post('timeout', { order: 'child', v: 7 })
        },
        { replace: true, retry: { maxAttempts: 1 } },
      )
      loop.on('timeout', (m) => void children.push(m.payload.v), { replace: true })
    }
    await a.post('busy', { ms: 0 }, { jobKey: 'parent' })
    await until(() => children.length === 1, 20_000, 'the follow-up ran')
    await a.post('busy', { ms: 1 }, { jobKey: 'doomed' })
    await until(() => calls === 1, 20_000, 'the doomed one ran')
    await eventually(async () => (await a.jobs.get('doomed')) === undefined, 20_000, 'its key freed')
    expect(await a.jobs.cancel('doomed')).toBe('unknown')
    await expect(a.post('busy', { ms: 0 }, { headers: { 'flowing-job-key': 'x' } })).rejects.toThrow(/flowing-job-key/)
    const said: string[] = []
    for (const loop of [a, b]) {
      loop.on('busy', (_m, ctx) => void ctx.post('timeout', { order: 'later', v: 8 }, { jobKey: 'child' }), {
        replace: true,
      })
      loop.on(
        'timeout',
        async () => {
          said.push(await a.jobs.cancel('child')) // a follow-up's own job key, while it runs
          children.push(8)
        },
        { replace: true },
      )
    }
    await a.post('busy', { ms: 0 })
    await until(() => children.length === 2, 20_000, 'the keyed follow-up ran')
    expect(said).toEqual(['started'])
  }, 60_000)
})
