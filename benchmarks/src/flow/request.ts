/**
 * Section 3 — `loop.request()` against `loop.post()`, and the peers that hand back results: p-queue
 * `add()` and fastq's promise API, each burst (all at once, `Promise.all`) and one awaited at a time.
 *
 * @module
 */
import { createLoop } from '@flowing/core'
import fastq from 'fastq'
import PQueue from 'p-queue'
import { expectEqual } from '../lib/check.js'
import type { BenchMessages } from '../lib/flowing.js'
import { WORKERS } from './limiter-cost.js'
import type { FlowCase } from './rounds.js'

// Sum of 2i for i < n: what every result-returning case must add up to.
const expectedSum = (n: number): number => n * (n - 1)

const double = async (i: number): Promise<number> => 2 * i

function newLoop(n: number) {
  const loop = createLoop<BenchMessages>({ capacity: n, workers: WORKERS })
  loop.on('tick', async (m) => 2 * m.payload)
  return loop
}

async function timed(what: string, n: number, body: () => Promise<number>): Promise<number> {
  const t0 = performance.now()
  const sum = await body()
  const seconds = (performance.now() - t0) / 1000
  expectEqual(`${what}: sum of results`, sum, expectedSum(n))
  return seconds
}

async function postDrain(n: number): Promise<number> {
  const loop = newLoop(n)
  const t0 = performance.now()
  for (let i = 0; i < n; i++) loop.post('tick', i)
  await loop.drain()
  const seconds = (performance.now() - t0) / 1000
  expectEqual('post + drain: succeeded', loop.metrics().counters.succeeded, n)
  await loop.stop()
  return seconds
}

async function requestAll(n: number): Promise<number> {
  const loop = newLoop(n)
  const s = await timed('request, Promise.all', n, async () => {
    const all: Promise<number>[] = []
    for (let i = 0; i < n; i++) all.push(loop.request<'tick', number>('tick', i))
    return (await Promise.all(all)).reduce((a, b) => a + b, 0)
  })
  await loop.stop()
  return s
}

async function requestEach(n: number): Promise<number> {
  const loop = newLoop(n)
  const s = await timed('request, one at a time', n, async () => {
    let sum = 0
    for (let i = 0; i < n; i++) sum += await loop.request<'tick', number>('tick', i)
    return sum
  })
  await loop.stop()
  return s
}

function pqueue(each: boolean): (n: number) => Promise<number> {
  return (n) => {
    const q = new PQueue({ concurrency: WORKERS })
    return timed(`p-queue add ${each ? 'each' : 'all'}`, n, async () => {
      if (each) {
        let sum = 0
        for (let i = 0; i < n; i++) sum += (await q.add(() => double(i))) as number
        return sum
      }
      const all: Promise<number>[] = []
      for (let i = 0; i < n; i++) all.push(q.add(() => double(i)) as Promise<number>)
      return (await Promise.all(all)).reduce((a, b) => a + b, 0)
    })
  }
}

function fastqPromise(each: boolean): (n: number) => Promise<number> {
  return (n) => {
    const q = fastq.promise<unknown, number, number>(double, WORKERS)
    return timed(`fastq promise ${each ? 'each' : 'all'}`, n, async () => {
      if (each) {
        let sum = 0
        for (let i = 0; i < n; i++) sum += await q.push(i)
        return sum
      }
      const all: Promise<number>[] = []
      for (let i = 0; i < n; i++) all.push(q.push(i))
      return (await Promise.all(all)).reduce((a, b) => a + b, 0)
    })
  }
}

/** The section's cases; `post` is the baseline. */
export const REQUEST_CASES: readonly FlowCase[] = [
  { id: 'post', label: 'Flowing post() all, then drain()', run: postDrain },
  { id: 'request-all', label: 'Flowing request() all, Promise.all', run: requestAll },
  { id: 'request-each', label: 'Flowing request() awaited one at a time', run: requestEach },
  { id: 'pqueue-all', label: 'p-queue add() all, Promise.all', run: pqueue(false) },
  { id: 'pqueue-each', label: 'p-queue add() awaited one at a time', run: pqueue(true) },
  { id: 'fastq-all', label: 'fastq.promise push() all, Promise.all', run: fastqPromise(false) },
  { id: 'fastq-each', label: 'fastq.promise push() awaited one at a time', run: fastqPromise(true) },
]
