/**
 * Partition ownership across real processes (test/process/owner.ts, one `Ownership` each) on a
 * private nats-server: random schedules of joins, graceful stops, `kill -9`s and SIGSTOP freezes
 * longer than the session. Checked on the members' own reports (wall-clock times on one machine):
 *
 * - **never two owners at once**: for each partition, one process's right to it ends before the
 *   next one's begins (a lapsed session's right ends when it lapsed, not when the thawed process
 *   noticed; a killed process's at its kill);
 * - **every partition owned again** by exactly one live process once the schedule settles (a session
 *   and a look after the last change).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import fc from 'fast-check'
import { expect, it } from 'vitest'
import { describeNats, useNatsServer } from './server.js'

const HERE = fileURLToPath(new URL('.', import.meta.url))
const OWNER = fileURLToPath(new URL('./process/owner.ts', import.meta.url))
const P = 8
const SESSION_MS = 1_000

interface Report {
  readonly tag: string
  readonly event: 'ready' | 'gained' | 'lost' | 'stopped'
  readonly p?: number
  readonly at: number
}

class Member {
  readonly child: ChildProcess
  readonly ready: Promise<void>
  readonly exited: Promise<void>
  state: 'live' | 'frozen' | 'gone' = 'live'

  constructor(
    readonly tag: string,
    port: number,
    name: string,
    reports: Report[],
  ) {
    const config = { port, name, partitions: P, sessionMs: SESSION_MS, releaseMs: 300, tag }
    this.child = spawn(
      process.execPath,
      ['--conditions=@flowing/source', '--import', 'tsx', OWNER, JSON.stringify(config)],
      {
        cwd: HERE,
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    )
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()))
    this.ready = new Promise((resolve, reject) => {
      this.child.once('exit', (code, signal) =>
        reject(new Error(`${tag} exited (${code ?? signal}) before it was ready`)),
      )
      createInterface({ input: this.child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
        const report = JSON.parse(line) as Report
        reports.push(report)
        if (report.event === 'ready') resolve()
      })
    })
  }

  async stop(): Promise<void> {
    this.state = 'gone'
    this.child.stdin?.write('stop\n')
    await this.exited
  }

  kill(reports: Report[]): Promise<void> {
    this.state = 'gone'
    reports.push({ tag: this.tag, event: 'stopped', at: performance.timeOrigin + performance.now() })
    this.child.kill('SIGKILL')
    return this.exited
  }
}

type Action = { kind: 'join' } | { kind: 'stop' | 'kill' | 'freeze'; who: number } | { kind: 'wait'; ms: number }

const action: fc.Arbitrary<Action> = fc.oneof(
  fc.constant({ kind: 'join' } as const),
  fc.constant({ kind: 'join' } as const),
  fc.record({ kind: fc.constantFrom('stop' as const, 'kill' as const, 'freeze' as const), who: fc.nat(5) }),
  fc.record({ kind: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 800 }) }),
)

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** For each partition, the intervals [from, to) each member had the right to it (to: Infinity while held). */
function intervals(reports: readonly Report[]): Map<number, { tag: string; from: number; to: number }[]> {
  const byPartition = new Map<number, { tag: string; from: number; to: number }[]>()
  const open = new Map<string, { tag: string; from: number; to: number }>()
  for (const r of [...reports].sort((a, b) => a.at - b.at)) {
    if (r.event === 'gained' && r.p !== undefined) {
      const interval = { tag: r.tag, from: r.at, to: Number.POSITIVE_INFINITY }
      open.set(`${r.tag}/${r.p}`, interval)
      byPartition.set(r.p, [...(byPartition.get(r.p) ?? []), interval])
    } else if (r.event === 'lost' && r.p !== undefined) {
      const interval = open.get(`${r.tag}/${r.p}`)
      if (interval !== undefined) interval.to = Math.min(interval.to, r.at)
      open.delete(`${r.tag}/${r.p}`)
    } else if (r.event === 'stopped') {
      // A killed process does nothing after its kill; a stopped one released everything before.
      for (const [key, interval] of open) {
        if (interval.tag !== r.tag) continue
        interval.to = Math.min(interval.to, r.at)
        open.delete(key)
      }
    }
  }
  return byPartition
}

describeNats('partition ownership across processes', () => {
  const server = useNatsServer()
  let run = 0

  it('never lets two processes hold a partition at once, and gives every partition one live owner again', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 4, maxLength: 7 }), async (actions) => {
        const name = `own${++run}`
        const reports: Report[] = []
        const members: Member[] = []
        const alive = () => members.filter((m) => m.state !== 'gone')
        const join = async () => {
          const m = new Member(`m${members.length}`, server().port, name, reports)
          members.push(m)
          await m.ready
        }
        try {
          await join()
          for (const a of actions) {
            const target =
              a.kind === 'join' || a.kind === 'wait' ? undefined : alive()[a.who % Math.max(1, alive().length)]
            if (a.kind === 'join') await join()
            else if (a.kind === 'wait') await sleep(a.ms)
            else if (target === undefined || target.state !== 'live') continue
            else if (a.kind === 'stop') await target.stop()
            else if (a.kind === 'kill') await target.kill(reports)
            else {
              target.state = 'frozen'
              target.child.kill('SIGSTOP')
              await sleep(SESSION_MS * 2)
              target.child.kill('SIGCONT')
              target.state = 'live'
            }
          }
          if (alive().length === 0) await join()
          await sleep(SESSION_MS * 2.5) // a session for the dead to age out, and a look after it
          const byPartition = intervals(reports)
          for (let p = 0; p < P; p++) {
            const list = (byPartition.get(p) ?? []).sort((x, y) => x.from - y.from)
            for (let i = 1; i < list.length; i++) {
              const [before, after] = [list[i - 1], list[i]] as [(typeof list)[0], (typeof list)[0]]
              expect(
                after.from,
                `partition ${p}: ${after.tag} gained it while ${before.tag} held it`,
              ).toBeGreaterThanOrEqual(before.to)
            }
            const holders = list.filter((x) => x.to === Number.POSITIVE_INFINITY).map((x) => x.tag)
            const live = new Set(alive().map((m) => m.tag))
            expect(holders.length, `partition ${p} held by ${holders.join(', ') || 'nobody'}`).toBe(1)
            expect(live.has(holders[0] as string)).toBe(true)
          }
        } finally {
          for (const m of members) if (m.state !== 'gone') m.child.kill('SIGKILL')
          await Promise.all(members.map((m) => m.exited))
        }
      }),
      { numRuns: 3 },
    )
  }, 240_000)
})
