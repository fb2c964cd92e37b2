/**
 * Keyed delays across processes. The KV bucket `<name>-jobs` names, for each job key, the one message
 * that may run under it (its distributed id), its due time and whether it started. Every other message
 * posted with the key — replaced, or cancelled — is stale: the process that moves it out of the delayed
 * stream drops it, and the process that would start it acknowledges it without running it.
 *
 * ```
 *  post { jobKey } ─▶ entry := this message (CAS; its mode reads the entry it replaces) ─▶ publish
 *  cancel(jobKey)  ─▶ entry waiting? delete it (CAS): 'cancelled' · started: 'started' · none: 'unknown'
 *  delayed, due    ─▶ entry names it? move it : drop it
 *  an attempt      ─▶ entry names it, waiting? → started (CAS), run : acknowledge unrun
 *                     ended: succeeded → entry deleted · failed → waiting again (a retry is cancellable)
 * ```
 *
 * @module
 */
import {
  type Clock,
  type JobCancelResult,
  type JobKeyMode,
  type LoopEmitter,
  type Message,
  type MessageMap,
  wallNow,
} from '@flowing/core'
import { type KV, Kvm } from '@nats-io/kv'
import type { NatsConnection } from '@nats-io/transport-node'

/** The NATS header of a message's job key (a message header: its handler sees it). */
export const JOB_KEY_HEADER = 'flowing-job-key'

/** What the bucket keeps per job key. */
interface Entry {
  /** The distributed id of the message the key names. */
  readonly id: string
  /** Its due time (ms since the epoch), for a delayed one. */
  readonly due?: number
  /** A debounced burst's latest due time. */
  readonly until?: number
  /** It started (a handler runs it): no longer cancellable. */
  readonly started?: boolean
}

/** A post's job-key options. */
export interface JobPost {
  readonly jobKey: string
  readonly jobKeyMode?: JobKeyMode | undefined
  readonly maxWaitMs?: number | undefined
}

// Compare-and-set rounds before a write gives up (only a storm of concurrent writers gets there).
const ROUNDS = 16

/** The job keys of one NATS loop. */
export class NatsJobs {
  readonly #kv: KV
  readonly #clock: Clock
  /** Messages acknowledged unrun because their key named another (or none). */
  skipped = 0

  constructor(kv: KV, clock: Clock) {
    this.#kv = kv
    this.#clock = clock
  }

  /** Opens (or creates) the loop's job-key bucket. */
  static bucket(nc: NatsConnection, name: string, replicas: number): Promise<KV> {
    return new Kvm(nc).create(`${name}-jobs`, { history: 1, replicas })
  }

  /**
   * Makes `post.jobKey` name message `id`, due at `dueAt` (epoch ms; undefined: at once) unless its mode
   * says otherwise; returns when it is due, and how to undo the claim if its publish fails.
   */
  async claim(post: JobPost, id: string, dueAt: number | undefined) {
    for (let round = 0; round < ROUNDS; round++) {
      const found = await this.#read(post.jobKey)
      const old = found?.entry.started === true ? undefined : found?.entry
      const entry = plan(post, id, dueAt, old, wallNow(this.#clock))
      if (await this.#write(post.jobKey, entry, found?.revision ?? 0)) {
        const undo = () => this.#undo(post.jobKey, id, found?.entry)
        return { due: entry.due, undo }
      }
    }
    throw new Error(`Flowing: job key ${JSON.stringify(post.jobKey)} changed ${ROUNDS} times while it was written`)
  }

  /** `loop.jobs.cancel()`. */
  async cancel(jobKey: string): Promise<JobCancelResult> {
    for (let round = 0; round < ROUNDS; round++) {
      const found = await this.#read(jobKey)
      if (found === undefined) return 'unknown'
      if (found.entry.started === true) return 'started'
      if (await this.#delete(jobKey, found.revision)) return 'cancelled'
    }
    return 'started' // written over and over meanwhile: no cancel could be promised
  }

  /** `loop.jobs.get()`: the id, due time and state of the message the key names. */
  async get(jobKey: string) {
    const found = await this.#read(jobKey)
    if (found === undefined) return undefined
    const { id, due, started } = found.entry
    return { id, state: started === true ? ('started' as const) : ('waiting' as const), dueAt: due }
  }

  /** Whether `jobKey` still names message `id` (a due delayed message is moved only then). */
  async names(jobKey: string, id: string): Promise<boolean> {
    return (await this.#read(jobKey))?.entry.id === id
  }

  /** A keyed message dead-lettered (no retry follows): its key is freed. `wireId`: its distributed id. */
  follow<M extends MessageMap>(events: LoopEmitter<M>, wireId: (m: Message<M>) => string): void {
    events.on('dead-lettered', (m) => {
      const jobKey = m.headers[JOB_KEY_HEADER]
      if (jobKey !== undefined) void this.#ended(jobKey, wireId(m), true).catch(() => {})
    })
  }

  /** Runs `attempt` if `jobKey` names message `id` and it waits; otherwise resolves unrun. */
  async guard<R>(jobKey: string, id: string, attempt: () => R | PromiseLike<R>): Promise<R | undefined> {
    if (!(await this.#start(jobKey, id))) {
      this.skipped++
      return undefined
    }
    let ok = false
    try {
      const result = await attempt()
      ok = true
      return result
    } finally {
      await this.#ended(jobKey, id, ok)
    }
  }

  async #start(jobKey: string, id: string): Promise<boolean> {
    for (let round = 0; round < ROUNDS; round++) {
      const found = await this.#read(jobKey)
      if (found === undefined || found.entry.id !== id) return false
      if (found.entry.started === true) return true // a redelivery of a started message: it runs again
      if (await this.#write(jobKey, { ...found.entry, started: true }, found.revision)) return true
    }
    return false
  }

  // An attempt ended: a success frees the key; a failure makes its retry cancellable again.
  async #ended(jobKey: string, id: string, ok: boolean): Promise<void> {
    const found = await this.#read(jobKey)
    if (found === undefined || found.entry.id !== id) return
    if (ok) await this.#delete(jobKey, found.revision)
    else await this.#write(jobKey, { ...found.entry, started: false }, found.revision)
  }

  // A publish failed: the key names what it named before, unless someone wrote it since.
  async #undo(jobKey: string, id: string, before: Entry | undefined): Promise<void> {
    const found = await this.#read(jobKey)
    if (found === undefined || found.entry.id !== id) return
    if (before === undefined) await this.#delete(jobKey, found.revision)
    else await this.#write(jobKey, before, found.revision)
  }

  async #read(jobKey: string): Promise<{ entry: Entry; revision: number } | undefined> {
    const e = await this.#kv.get(keyOf(jobKey))
    return e === null || e.operation !== 'PUT' ? undefined : { entry: e.json<Entry>(), revision: e.revision }
  }

  async #write(jobKey: string, entry: Entry, revision: number): Promise<boolean> {
    return this.#cas(() =>
      revision === 0
        ? this.#kv.create(keyOf(jobKey), JSON.stringify(entry))
        : this.#kv.update(keyOf(jobKey), JSON.stringify(entry), revision),
    )
  }

  #delete(jobKey: string, revision: number): Promise<boolean> {
    return this.#cas(() => this.#kv.delete(keyOf(jobKey), { previousSeq: revision }))
  }

  async #cas(write: () => Promise<unknown>): Promise<boolean> {
    try {
      await write()
      return true
    } catch (error) {
      if (/wrong last sequence|key exists|10071/i.test(String((error as Error)?.message ?? error))) return false
      throw error
    }
  }
}

// The entry a post writes: its due time by its mode, over the waiting message it replaces.
function plan(post: JobPost, id: string, dueAt: number | undefined, old: Entry | undefined, now: number): Entry {
  const mode = post.jobKeyMode ?? 'replace'
  if (mode === 'preserve_run_at' && old !== undefined) return withDue(id, old.due, undefined)
  if (mode !== 'debounce') return withDue(id, dueAt, undefined)
  const until = old !== undefined ? old.until : post.maxWaitMs === undefined ? undefined : now + post.maxWaitMs
  return withDue(id, until === undefined ? dueAt : Math.min(dueAt ?? now, until), until)
}

function withDue(id: string, due: number | undefined, until: number | undefined): Entry {
  return { id, ...(due === undefined ? {} : { due }), ...(until === undefined ? {} : { until }) }
}

// KV keys allow letters, digits, `-`, `_`, `=`, `.`, `/`: a job key is hex-escaped.
function keyOf(jobKey: string): string {
  return `j.${Buffer.from(jobKey, 'utf8').toString('hex')}`
}
