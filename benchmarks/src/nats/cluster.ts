/**
 * The parent side of a run across processes: forks worker processes ({@link Command} over IPC), a
 * producer loop that publishes into the same streams, the publish paths (a burst through a window of
 * concurrent posts, or a steady rate), and waiting until the work stream is empty.
 *
 * @module
 */
import { type ChildProcess, fork } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { createNatsLoop, type NatsLoop } from '@flowing/nats'
import { BenchError } from '../lib/check.js'
import { type Command, epochNow, type JobMessages, type Report, type WorkerConfig } from './protocol.js'

/** The worker script: the built one next to this file, or (from source) the TypeScript through tsx. */
function workerScript(): { script: string; execArgv: string[] } {
  const js = fileURLToPath(new URL('./worker.js', import.meta.url))
  if (existsSync(js)) return { script: js, execArgv: [] }
  return {
    script: fileURLToPath(new URL('./worker.ts', import.meta.url)),
    execArgv: ['--conditions=@flowing/source', '--import', 'tsx'],
  }
}

/** One worker process. */
export class Worker {
  readonly child: ChildProcess
  readonly exited: Promise<NodeJS.Signals | number | null>
  #listeners = new Set<(r: Report) => void>()

  constructor(inherit: boolean) {
    const { script, execArgv } = workerScript()
    this.child = fork(script, [], { execArgv, stdio: ['ignore', inherit ? 'inherit' : 'ignore', 'inherit', 'ipc'] })
    this.child.on('message', (r: Report) => {
      if (r.type === 'failed') process.stderr.write(`worker ${this.child.pid} failed: ${r.error}\n`)
      for (const l of [...this.#listeners]) l(r)
    })
    this.exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve(signal ?? code)))
  }

  get pid(): number {
    return this.child.pid ?? 0
  }

  send(cmd: Command): void {
    this.child.send(cmd)
  }

  /** Calls `listener` for every report until it returns true. */
  on(listener: (r: Report) => boolean | undefined): void {
    const l = (r: Report) => {
      if (listener(r) === true) this.#listeners.delete(l)
    }
    this.#listeners.add(l)
  }

  /** The next report of `type` (rejects if the process exits first or after `ms`). */
  next<T extends Report['type']>(type: T, ms = 30_000): Promise<Extract<Report, { type: T }>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new BenchError(`worker ${this.pid}: no '${type}' after ${ms} ms`)), ms)
      this.exited.then(() => reject(new BenchError(`worker ${this.pid} exited before '${type}'`)))
      this.on((r) => {
        if (r.type !== type) return false
        clearTimeout(timer)
        resolve(r as Extract<Report, { type: T }>)
        return true
      })
    })
  }

  /** Asks for `cmd` and waits for `reply`. */
  ask<T extends Report['type']>(cmd: Command, reply: T, ms?: number): Promise<Extract<Report, { type: T }>> {
    const answer = this.next(reply, ms)
    this.send(cmd)
    return answer
  }

  /** `kill -9`. */
  kill9(): void {
    this.child.kill('SIGKILL')
  }

  /** Stops its loop and waits for the exit (kills it if it does not stop within 10 s). */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return
    const timer = setTimeout(() => this.kill9(), 10_000)
    this.send({ type: 'stop' })
    await this.exited
    clearTimeout(timer)
  }
}

/** Forks `count` workers and waits until each made its loop (not started). */
export async function spawnWorkers(count: number, config: WorkerConfig, inherit = false): Promise<Worker[]> {
  const workers = Array.from({ length: count }, () => new Worker(inherit))
  await Promise.all(workers.map((w) => w.ask({ type: 'config', config }, 'ready')))
  return workers
}

/** Starts every worker's loop; resolves with the latest start time. */
export async function startWorkers(workers: readonly Worker[]): Promise<number> {
  const started = await Promise.all(workers.map((w) => w.ask({ type: 'start' }, 'started')))
  return Math.max(...started.map((s) => s.at))
}

/** A producer: a loop of the same name and shape that only publishes (never started). */
export function producer(config: WorkerConfig): Promise<NatsLoop<JobMessages>> {
  return createNatsLoop<JobMessages>({
    servers: config.servers,
    name: config.name,
    partitions: config.partitions,
    ackWaitMs: config.ackWaitMs,
    replicas: config.replicas ?? 1,
    loop: { logger: false },
  })
}

/** Publishes jobs in key order (`seq % keys`), each key's in sequence; one connection keeps that order. */
export class Jobs {
  readonly #perKey: Int32Array
  #seq = 0
  constructor(
    readonly loop: NatsLoop<JobMessages>,
    readonly keys: number,
  ) {
    this.#perKey = new Int32Array(keys)
  }

  get published(): number {
    return this.#seq
  }

  /** Publishes the next job; resolves once the stream stored it. */
  post(hold = false): Promise<unknown> {
    const seq = this.#seq++
    const ki = seq % this.keys
    const ks = this.#perKey[ki] ?? 0
    this.#perKey[ki] = ks + 1
    const payload = { ki, ks, seq, at: epochNow(), ...(hold ? { hold } : {}) }
    return this.loop.post('job', payload, { key: `key-${ki}` })
  }

  /** Publishes `n` jobs through `window` concurrent posts. */
  async burst(n: number, window = 256): Promise<void> {
    const end = this.#seq + n
    const lane = async () => {
      while (this.#seq < end) await this.post()
    }
    await Promise.all(Array.from({ length: Math.min(window, n) }, lane))
  }

  /** Publishes `n` jobs at `perSecond`, in 10 ms ticks; resolves once all are stored. */
  async steady(n: number, perSecond: number): Promise<void> {
    const end = this.#seq + n
    const t0 = performance.now()
    const pending: Promise<unknown>[] = []
    while (this.#seq < end) {
      const due = Math.min(end, Math.floor(((performance.now() - t0) / 1000) * perSecond) + 1)
      while (this.#seq < due) pending.push(this.post())
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    await Promise.all(pending)
  }
}

/** Resolves once the work stream is empty (every message acknowledged), polling every 10 ms. */
export async function emptied(loop: NatsLoop<JobMessages>, ms: number): Promise<number> {
  const deadline = performance.now() + ms
  for (;;) {
    const { messages } = await loop.fill()
    if (messages === 0) return epochNow()
    if (performance.now() > deadline) throw new BenchError(`${messages} messages still in the stream after ${ms} ms`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
