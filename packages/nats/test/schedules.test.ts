/**
 * Recurring schedules across the processes of one NATS loop (three loops of one name on a private
 * server, each on its own connection): every process upserts the same schedule at start, and each due
 * time fires once among them — none lost, none twice — while a process stops and comes back.
 */
import { InvalidArgumentError } from '@flowing/core'
import { afterEach, expect, it } from 'vitest'
import { createNatsLoop, type NatsLoop } from '../src/index.js'
import { describeNats, useNatsServer } from './server.js'
import { until } from './until.js'

interface Messages {
  tick: { n: number }
}

describeNats('schedules shared by the processes of a NATS loop', () => {
  const server = useNatsServer()
  const open: NatsLoop<Messages>[] = []
  let names = 0
  afterEach(async () => {
    await Promise.all(open.splice(0).map((l) => l.stop({ deadlineMs: 0 })))
  })

  const process = async (name: string, fires: { at: string; who: number }[], who: number) => {
    const loop = await createNatsLoop<Messages>({ servers: server().url, name, partitions: 4, loop: { logger: false } })
    open.push(loop)
    loop.on('tick', (m) => {
      fires.push({ at: m.headers['flowing-fire-at'] as string, who })
    })
    await loop.schedules.upsert('every-400', { every: 400 }, 'tick', { n: 1 })
    await loop.start()
    return loop
  }

  it('fires each due time once among three processes, also while one stops and another joins', async () => {
    const name = `sched${names++}`
    const fires: { at: string; who: number }[] = []
    const loops = [await process(name, fires, 0), await process(name, fires, 1), await process(name, fires, 2)]
    await until(() => fires.length >= 5, 20_000, 'five fires')
    await (loops[1] as NatsLoop<Messages>).stop({ deadlineMs: 0 }) // one leaves
    await until(() => fires.length >= 9, 20_000, 'nine fires')
    await process(name, fires, 3) // another joins (its upsert changes nothing)
    await until(() => fires.length >= 14, 20_000, 'fourteen fires')
    await Promise.all(open.splice(0).map((l) => l.stop({ deadlineMs: 2_000 })))
    const times = fires.map((f) => Date.parse(f.at))
    const distinct = [...new Set(times)].sort((a, b) => a - b)
    expect(times.length).toBe(distinct.length) // none twice
    const first = distinct[0] as number
    expect(distinct).toEqual(distinct.map((_, k) => first + k * 400)) // none lost
    expect(new Set(fires.map((f) => f.who)).size).toBeGreaterThan(1) // more than one process moved them
  }, 60_000)

  it('upserts, pauses, resumes, lists and removes; refuses a bad spec or a group, writing nothing', async () => {
    const name = `sched${names++}`
    const fires: { at: string; who: number }[] = []
    const loop = await process(name, fires, 0)
    const s = loop.schedules
    await expect(s.upsert('bad', { cron: '61 * * * *' }, 'tick', { n: 1 })).rejects.toThrow(InvalidArgumentError)
    await expect(s.upsert('bad', { every: 10, tz: 'UTC' }, 'tick', { n: 1 })).rejects.toThrow(/spec\.tz/)
    await expect(s.upsert('bad', { every: 10 }, 'tick', { n: 1 }, { group: 'g' })).rejects.toThrow(/options\.group/)
    await expect(s.upsert('bad', { every: 10, endAt: 5 }, 'tick', { n: 1 })).rejects.toThrow(/a due time after now/)
    expect(await s.get('bad')).toBeUndefined()
    const info = await s.upsert('daily', { cron: '0 3 * * *', tz: 'Europe/Berlin' }, 'tick', { n: 2 })
    expect(info.nextAt).toBeGreaterThan(Date.now())
    expect((await s.list()).map((i) => i.id)).toEqual(['daily', 'every-400'])
    expect(await s.pause('every-400')).toBe(true)
    await s.upsert('every-400', { every: 400 }, 'tick', { n: 1 }) // the same again: it stays paused
    const paused = fires.length
    await new Promise((r) => setTimeout(r, 1_500))
    expect(fires.length).toBeLessThanOrEqual(paused + 2) // at most the ones in flight
    expect(await s.get('every-400')).toMatchObject({ paused: true, nextAt: undefined })
    expect(await s.resume('every-400')).toBe(true)
    await until(() => fires.length >= paused + 3, 20_000, 'fires after resume')
    expect(await s.remove('every-400')).toBe(true)
    expect(await s.remove('every-400')).toBe(false)
    const removed = fires.length
    await new Promise((r) => setTimeout(r, 1_500))
    expect(fires.length).toBeLessThanOrEqual(removed + 2)
  }, 60_000)
})
