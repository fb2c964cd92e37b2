/**
 * Real processes on a private nats-server: three processes share a loop whose schedule fires every
 * 300 ms; one of them is killed (SIGKILL) six times at random moments — at fire times among them — and
 * a new one takes its place. Every due time from the first fire to the last fires, none early; a due
 * time runs again only when a kill cut its run short.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, expect, it } from 'vitest'
import { describeNats, useNatsServer } from './server.js'
import { until } from './until.js'

const CHILD = fileURLToPath(new URL('./process/scheduler.ts', import.meta.url))
const HERE = fileURLToPath(new URL('.', import.meta.url))
const KILLS = 6
const dir = mkdtempSync(join(tmpdir(), 'flowing-nats-schedule-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const read = (log: string) => {
  try {
    return readFileSync(log, 'utf8')
  } catch {
    return ''
  }
}

describeNats('a schedule shared by processes killed at fire times', () => {
  const server = useNatsServer()

  it('fires every due time, once but for runs a kill cut short, never early', async () => {
    const log = join(dir, 'log.txt')
    const config = JSON.stringify({ url: server().url, name: 'killsched', log })
    const ready = () =>
      read(log)
        .split('\n')
        .filter((l) => l.startsWith('ready')).length
    const spawnOne = async (): Promise<ChildProcess> => {
      const before = ready()
      const child = spawn(process.execPath, ['--conditions=@flowing/source', '--import', 'tsx', CHILD, config], {
        cwd: HERE,
        stdio: ['ignore', 'inherit', 'inherit'],
      })
      await until(() => ready() > before, 30_000, 'a process ready')
      return child
    }
    const kill = async (child: ChildProcess) => {
      const exited = new Promise((r) => child.once('exit', r))
      child.kill('SIGKILL')
      await exited
    }
    const alive = [await spawnOne(), await spawnOne(), await spawnOne()]
    try {
      for (let k = 0; k < KILLS; k++) {
        await new Promise((r) => setTimeout(r, 400 + Math.random() * 600))
        await kill(alive.splice(Math.floor(Math.random() * alive.length), 1)[0] as ChildProcess)
        alive.push(await spawnOne())
      }
      const killedAt = Date.now()
      // The killed processes' partitions and unacknowledged carriers come back within a session / ack wait.
      await until(() => fires(read(log)).some((t) => t > killedAt + 4_000), 30_000, 'fires after the kills')
    } finally {
      await Promise.all(alive.map(kill))
    }
    const text = read(log)
    expect(text.split('\n').filter((l) => l.startsWith('EARLY'))).toEqual([])
    const times = fires(text)
    const distinct = [...new Set(times)].sort((a, b) => a - b)
    const first = distinct[0] as number
    expect(distinct).toEqual(distinct.map((_, k) => first + k * 300)) // none lost
    expect(times.length - distinct.length).toBeLessThanOrEqual(KILLS) // twice only where a kill cut a run short
  }, 120_000)
})

function fires(text: string): number[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('fire '))
    .map((l) => Number(l.split(' ')[1]))
}
