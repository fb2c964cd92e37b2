/**
 * A pool of worker threads (piscina) that threaded handlers run on. Its threads are the only queue
 * besides the loop's own: the loop's worker slots bound how many attempts are handed over at once, so
 * backpressure, priorities and per-key order stay the loop's.
 *
 * @module
 */
import { availableParallelism } from 'node:os'
import { MessagePort, type ResourceLimits, receiveMessageOnPort, type Transferable } from 'node:worker_threads'
import { InvalidArgumentError } from '@flowing/core'
import { argumentChecks } from '@flowing/errors'
import { Piscina } from 'piscina'
import { PreloadList } from './preload.js'
import { threadFile } from './thread-file.js'
import { NOTES_PORT, type Note, type NotesPortMessage, type Outcome, type Task } from './wire.js'

const check = argumentChecks(InvalidArgumentError)
const BRAND = Symbol.for('@flowing/threads.ThreadPool')
const KEYS = ['minThreads', 'maxThreads', 'idleTimeoutMs', 'resourceLimits', 'execArgv'] as const

/** How a {@link ThreadPool} sizes its threads. */
export interface ThreadPoolOptions {
  /**
   * Threads kept even when idle.
   * @defaultValue 1
   */
  readonly minThreads?: number
  /**
   * Threads at most: the CPU work running at once.
   * @defaultValue the machine's available parallelism − 1 (at least 1)
   */
  readonly maxThreads?: number
  /**
   * An idle thread above `minThreads` ends after this long (ms).
   * @defaultValue 30 000
   */
  readonly idleTimeoutMs?: number
  /** Each thread's heap and stack limits; a thread past them dies, failing only its attempt. */
  readonly resourceLimits?: ResourceLimits
  /**
   * Node options of the threads (`--enable-source-maps`, …).
   * @defaultValue the process's own (`process.execArgv`)
   */
  readonly execArgv?: readonly string[]
}

/** Quantiles of a time, in ms, over the tasks run so far. */
export interface TimeSummary {
  readonly p50: number
  readonly p99: number
  readonly max: number
}

/** What a {@link ThreadPool} shows of itself (`pool.stats()`). */
export interface ThreadPoolStats {
  /** Threads now. */
  readonly threads: number
  /** Tasks handed over and waiting for a free thread. */
  readonly queued: number
  /** The share of the pool's capacity used since it started (0–1). */
  readonly utilization: number
  /** How long tasks ran on a thread. */
  readonly runTime: TimeSummary
  /** How long tasks waited for a thread. */
  readonly waitTime: TimeSummary
}

/**
 * The worker threads threaded handlers run on. One pool may serve several types and loops; without
 * one, `threaded()` uses a shared default pool.
 * @group Threads
 */
export class ThreadPool {
  /** A pool made by any copy of this package in the process is a ThreadPool (`instanceof`). */
  static [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && BRAND in value
  }

  readonly #piscina: Piscina
  // Each thread's notes channel (its commit points and follow-ups), and who listens for each task's.
  readonly #notePorts = new Set<MessagePort>()
  readonly #listeners = new Map<number, (note: Note) => void>()
  readonly #preload = new PreloadList()
  #nextTask = 0
  /** Threads at most. */
  readonly maxThreads: number
  /** The threads' Node options (`undefined`: the process's own). */
  readonly execArgv: readonly string[] | undefined

  /**
   * @param options - sizing (see {@link ThreadPoolOptions})
   * @throws InvalidArgumentError for an unknown option or a value out of range
   */
  constructor(options?: ThreadPoolOptions) {
    const o = check.snapshot('options', options ?? {})
    check.knownKeys('options', o, KEYS)
    const maxThreads =
      o['maxThreads'] === undefined
        ? Math.max(1, availableParallelism() - 1)
        : check.integer('options.maxThreads', o['maxThreads'], { min: 1 })
    const minThreads =
      o['minThreads'] === undefined
        ? Math.min(1, maxThreads)
        : check.integer('options.minThreads', o['minThreads'], { min: 0, max: maxThreads })
    const idleTimeout =
      o['idleTimeoutMs'] === undefined ? 30_000 : check.number('options.idleTimeoutMs', o['idleTimeoutMs'], { min: 0 })
    const resourceLimits = check.optionsObject('options.resourceLimits', o['resourceLimits']) as
      | ResourceLimits
      | undefined
    const execArgv = o['execArgv'] === undefined ? undefined : checkArgv(o['execArgv'])
    Object.defineProperty(this, BRAND, { value: true })
    this.maxThreads = maxThreads
    this.execArgv = execArgv
    this.#piscina = new Piscina({
      filename: threadFile('worker.js'),
      workerData: { preload: this.#preload.buffer },
      minThreads,
      maxThreads,
      idleTimeout,
      ...(resourceLimits === undefined ? {} : { resourceLimits }),
      ...(execArgv === undefined ? {} : { execArgv: [...execArgv] }),
    })
    this.#piscina.on('message', (message: unknown) => this.#adopt(message))
  }

  // A starting thread hands over its notes channel (before it can run a task).
  #adopt(message: unknown): void {
    const port = (message as Partial<NotesPortMessage> | null)?.[NOTES_PORT]
    if (!(port instanceof MessagePort)) return
    this.#notePorts.add(port)
    port.on('message', (note: Note) => this.#listeners.get(note.task)?.(note))
    port.on('close', () => this.#notePorts.delete(port))
    port.unref()
  }

  // Delivers every note already sent: a task's notes precede its answer on its thread's channel, but
  // the answer comes over piscina's, which may be read first — and a killed thread's last notes count.
  #drainNotes(): void {
    for (const port of this.#notePorts) {
      for (let got = receiveMessageOnPort(port); got !== undefined; got = receiveMessageOnPort(port)) {
        const note = got.message as Note
        this.#listeners.get(note.task)?.(note)
      }
    }
  }

  /** Threads now. */
  get threads(): number {
    return this.#piscina.threads.length
  }

  /** Tasks handed over and not yet started (they wait for a free thread). */
  get queued(): number {
    return this.#piscina.queueSize
  }

  /** The share of the pool's capacity used since it started (0–1). */
  get utilization(): number {
    return this.#piscina.utilization
  }

  /** Threads, queue, utilization, and the run and wait times of the tasks so far. */
  stats(): ThreadPoolStats {
    const { runTime, waitTime } = this.#piscina.histogram
    const summary = (h: { p50: number; p99: number; max: number }): TimeSummary => ({
      p50: h.p50,
      p99: h.p99,
      max: h.max,
    })
    return {
      threads: this.threads,
      queued: this.queued,
      utilization: this.utilization,
      runTime: summary(runTime),
      waitTime: summary(waitTime),
    }
  }

  /**
   * Runs one task; `signal` aborting ends it — a running thread is terminated and replaced. The
   * task's commit points and follow-ups reach `onNote` in order, all of them before this settles.
   * @internal `threaded()` calls it.
   */
  async run(
    task: Omit<Task, 'id'>,
    transferList: readonly Transferable[],
    signal: AbortSignal | undefined,
    onNote: (note: Note) => void,
  ): Promise<Outcome> {
    const id = ++this.#nextTask
    this.#preload.add(task.module)
    this.#listeners.set(id, onNote)
    try {
      return await this.#piscina.run({ ...task, id } satisfies Task, {
        transferList: transferList as Transferable[],
        ...(signal === undefined ? {} : { signal }),
      })
    } finally {
      this.#drainNotes()
      this.#listeners.delete(id)
    }
  }

  /** Ends every thread (running tasks are rejected); the pool cannot be used after. */
  async close(): Promise<void> {
    await this.#piscina.destroy()
  }
}

// The default pool lives on the process, not on this module: two copies of the package in one process
// (two installs, or a module loaded through tsx beside the tuner) share it.
const SHARED = Symbol.for('@flowing/threads.defaultPool')
const slot = globalThis as { [SHARED]?: ThreadPool | undefined }

/** The pool `threaded()` uses when it is given none, made at the first threaded attempt. */
export function defaultPool(): ThreadPool {
  slot[SHARED] ??= new ThreadPool()
  return slot[SHARED]
}

/**
 * Makes `pool` the one threaded handlers without a `pool` option run on from their next attempt (the
 * tuner sizes threads this way); `undefined` goes back to a default pool made when next needed.
 * Returns the pool it replaces, which the caller may close.
 *
 * @param pool - the new default pool, or `undefined`
 * @throws InvalidArgumentError when `pool` is not a ThreadPool
 * @group Threads
 */
export function setDefaultPool(pool: ThreadPool | undefined): ThreadPool | undefined {
  if (pool !== undefined && !(pool instanceof ThreadPool)) throw new InvalidArgumentError('pool', 'a ThreadPool', pool)
  const before = slot[SHARED]
  slot[SHARED] = pool
  return before
}

function checkArgv(value: unknown): readonly string[] {
  if (!Array.isArray(value) || !value.every((a) => typeof a === 'string')) {
    throw new InvalidArgumentError('options.execArgv', 'an array of strings', value)
  }
  return value
}
