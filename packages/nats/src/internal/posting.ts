/**
 * How a NATS loop's posts are published: each message as a `Wire` (headers stamped), into its key's
 * partition or, delayed, into the delayed stream; through its job key when it has one; a schedule's
 * fires and carriers alike.
 *
 * @module
 */
import { DuplicateMessageError, type HeaderStamper, type Message, type PostOptions } from '@flowing/core'
import type { ResolvedNatsOptions } from '../options.js'
import { toMessage, type Wire, wireOf } from './codec.js'
import type { FollowUp } from './context.js'
import { JOB_KEY_HEADER, type NatsJobs } from './job-keys.js'
import { publishKeyed, splitJobOptions } from './keyed-posts.js'
import type { NatsPostOptions } from './post-input.js'
import { Ids, type Publisher } from './publisher.js'
import type { SchedulePublishing } from './schedule-keeper.js'
import type { Topology } from './topology.js'

/** What posting publishes through. */
export interface PostingParts {
  readonly publisher: Publisher
  readonly topology: Topology
  readonly options: Pick<ResolvedNatsOptions, 'partitions' | 'maxDelayed' | 'clock'>
  readonly jobs: NatsJobs
  /** The loop's header stampers now (`stamp()` replaces the list). */
  stampers(): readonly HeaderStamper[]
}

/** The publishing side of one NATS loop. */
export class Posting {
  readonly #p: PostingParts
  readonly #ids = new Ids()

  constructor(parts: PostingParts) {
    this.#p = parts
  }

  /** A new distributed id. */
  nextId(): string {
    return this.#ids.next()
  }

  /** A message as it travels (a follow-up's `parent` gives its trace, hops and headers). */
  wire(
    id: string,
    type: string,
    payload: unknown,
    o: PostOptions | undefined,
    parent: Pick<Message, 'traceId' | 'hops' | 'headers'> | undefined,
  ): Wire {
    return wireOf(id, type, payload, o, parent, this.#p.stampers(), this.#p.options.clock)
  }

  /** A post (delayed by `delayMs`), through its job key when it has one (see `NatsJobs`). */
  async send(type: string, payload: unknown, options: NatsPostOptions | undefined, delayMs: number | undefined) {
    const { post, job } = splitJobOptions(options)
    const wire = this.wire(this.nextId(), type, payload, post, undefined)
    const due = delayMs === undefined ? undefined : wire.postedAtEpochMs + delayMs
    if (job === undefined) await this.publish(wire, due, true)
    else await publishKeyed(this.#p.jobs, job, wire.id, due, wire.postedAtEpochMs, (at) => this.publish(wire, at, true))
    return wire
  }

  /**
   * Publishes `wire` into its partition, or the delayed stream until `dueAtEpochMs`. A duplicate is
   * refused for a post with an idempotency key (`refuseDuplicate`), and expected for a follow-up posted
   * again by a retried or redelivered handler (its deterministic id makes it one).
   */
  async publish(wire: Wire, dueAtEpochMs: number | undefined, refuseDuplicate: boolean): Promise<void> {
    const { topology, options, publisher } = this.#p
    const msgId = wire.idempotencyKey ?? wire.id
    const published =
      dueAtEpochMs === undefined
        ? await publisher.publish(topology.subjectOf(wire), wire, msgId)
        : await publisher.publishDelayed(topology.delayedSubject, { ...wire, dueAtEpochMs }, msgId, options.maxDelayed)
    if (refuseDuplicate && published.duplicate && wire.idempotencyKey !== undefined) {
      throw new DuplicateMessageError(wire.type, wire.idempotencyKey, 'published')
    }
  }

  /** A handler's follow-up (`ctx.post`): published into its partition at once (through its job key, if any). */
  followUp(): FollowUp {
    return (parent, id, type, payload, options) => {
      // A follow-up is not its parent's job, nor a schedule's next fire: those headers stay with the parent.
      const { [JOB_KEY_HEADER]: _job, 'flowing-schedule': _schedule, ...headers } = parent.headers
      const from = { traceId: parent.traceId, hops: parent.hops, headers } // read: a local message has getters
      const { post, job } = splitJobOptions(options)
      const wire = this.wire(id ?? this.nextId(), type, payload, post, from)
      const send = (at: number | undefined) => this.publish(wire, at, false)
      const stored =
        job === undefined
          ? send(undefined)
          : publishKeyed(this.#p.jobs, job, wire.id, undefined, wire.postedAtEpochMs, send)
      stored.catch(() => {}) // the parent's settlement awaits it (and hands the parent back if it fails)
      return { stored, message: toMessage<Record<string, unknown>, string>(wire, this.#p.options.clock) }
    }
  }

  /** A schedule's fires go into their partitions, its carriers into the delayed stream (see `ScheduleKeeper`). */
  schedules(): SchedulePublishing {
    const { topology, options, publisher } = this.#p
    return {
      fire: (w) => publisher.publish(topology.subjectOf(w), w, `${w.id}@due`),
      carrier: (w) => publisher.publishDelayed(topology.delayedSubject, w, w.id, options.maxDelayed),
    }
  }
}
