/**
 * The options of {@link createNatsLoop}, and their checks: a typo or a wrong type is an
 * `InvalidArgumentError` naming the option, before anything connects.
 *
 * @module
 */

import { WatermarkController } from '@flowing/backpressure'
import { type Clock, InvalidArgumentError, type LoopOptions, systemClock } from '@flowing/core'
import { argumentChecks } from '@flowing/errors'
import type { NatsConnection } from '@nats-io/transport-node'
import type { StreamBackpressureOptions } from './internal/stream-pressure.js'

/**
 * Options of a distributed loop on NATS JetStream.
 *
 * @group NATS loop
 */
export interface NatsLoopOptions {
  /** The server(s) to connect to, such as `'127.0.0.1:4222'`; or pass {@link NatsLoopOptions.connection}. */
  readonly servers?: string | readonly string[]
  /** A connection of your own (the loop never closes it); instead of `servers`. */
  readonly connection?: NatsConnection
  /**
   * The loop's name, the same in every process that shares the work: it names the streams
   * (`<name>-work-<partition>`…), their subjects, the consumers and the KV buckets.
   * Letters, digits, `_` and `-`.
   * @defaultValue `'flowing'`
   */
  readonly name?: string
  /**
   * Partitions P: a message's key maps to one of them (`hash(key) % P`); a partition is
   * owned by one process at a time, each of its keys running one message at a time. Fixed for the life
   * of the streams.
   * @defaultValue 32
   */
  readonly partitions?: number
  /** Handlers this process runs at once (its local loop's workers), across its partitions. @defaultValue 8 */
  readonly workers?: number
  /**
   * Messages of one owned partition held at once (its consumer's `max_ack_pending`), fetched in
   * batches; the local loop runs one message of a key at a time. @defaultValue 128
   */
  readonly maxAckPending?: number
  /**
   * How long a process that stopped renewing its membership (dead, frozen, cut off) keeps its
   * partitions (ms): the bound on a takeover; it lets go a quarter earlier. On a cluster keep it above
   * the servers' leader election (nats-server 2.9: up to ~9 s), or every process drops its partitions
   * while the members' bucket elects a leader. @defaultValue 6_000 with `replicas: 1`, 20_000 with more
   */
  readonly sessionMs?: number
  /**
   * How long the server waits for an acknowledgement before it hands a message out again (ms); extended
   * while a message runs, backs off or is held by a breaker. @defaultValue 30_000
   */
  readonly ackWaitMs?: number
  /**
   * How much earlier than the server the process gives a message up (ms): after `ackWaitMs − leaseMarginMs`
   * without an extension (a frozen process, a blocked event loop) it refuses to acknowledge it.
   * @defaultValue a fifth of `ackWaitMs`, at least 500
   */
  readonly leaseMarginMs?: number
  /**
   * Deliveries without an outcome after which a message is dead-lettered without running again — a
   * message that kills or freezes its process cannot loop for ever. Every delivery that did not end
   * counts: crashes (across a takeover of the partition), lost leases, no handler for its type.
   * @defaultValue 5
   */
  readonly maxDeliveries?: number
  /** The partitions' bound: each holds ⌈maxMessages / P⌉; a full one refuses posts. @defaultValue 1_000_000 */
  readonly maxMessages?: number
  /** The partitions' bound in bytes (divided the same way), or -1 for none. @defaultValue -1 */
  readonly maxBytes?: number
  /** Delayed messages the delayed stream holds at most. @defaultValue 1_000_000 */
  readonly maxDelayed?: number
  /** Dead letters kept (the oldest go first). @defaultValue 100_000 */
  readonly maxDeadLetters?: number
  /**
   * How long the server remembers a message id to drop a re-published duplicate (ms): a producer's
   * retry, or a follow-up posted again by a retried handler.
   * @defaultValue 120_000
   */
  readonly duplicateWindowMs?: number
  /** Stream replicas on a cluster. @defaultValue 1 */
  readonly replicas?: number
  /**
   * The idempotency ledger on a NATS KV bucket (`<name>-keys`), shared by every process: a key done
   * anywhere runs nowhere again, and a redelivered message takes its key over with a compare-and-set
   * fence. `ttlMs`: how long a finished key is remembered.
   * @defaultValue `{ ttlMs: 86_400_000 }` (on)
   */
  readonly idempotency?: false | { readonly ttlMs?: number }
  /**
   * Options of the local loop that runs the handlers in this process — retries, timeouts, breakers,
   * classification, logging, traces. Its capacity, store and idempotency come from this loop.
   */
  readonly loop?: Omit<LoopOptions, 'capacity' | 'store' | 'idempotency' | 'workers' | 'maxDelayed' | 'clock'>
  /**
   * Told of what goes wrong with no caller to throw to: a dead letter or follow-up the server did not
   * store (its message is handed back and runs again), a delivery the local loop could not take.
   * @defaultValue a `console.warn` line
   */
  readonly onError?: (error: unknown) => void
  /**
   * Watermark backpressure over the partitions' fill (warn 60 %, shed 80 %, reject 95 % by
   * default, as in-process): `backpressure` events on {@link NatsLoop.events}, and posts refused with
   * `BackpressureError` (`tryPost` status `shed` / `reject`) before a partition itself is full.
   * @defaultValue false
   */
  readonly backpressure?: boolean | StreamBackpressureOptions
  /**
   * The time source and timers of this process: leases and their heartbeat, the gap watch, the
   * stream-fill readings, polling and back-off, delays' due times, timestamps, and the local loop's
   * retries, timeouts and breakers. Pass core's `VirtualClock` in tests and drive it.
   *
   * @remarks The server keeps its own time: `ackWaitMs`, the wait of a handed-back message and of a
   * delayed one are real milliseconds whatever this clock says. A lease is safe only on a clock that
   * never runs slower than real time, so a virtual clock is for tests. The wall-clock times written
   * into the streams (posted-at, due-at, a letter's `atEpochMs`) are its `wallNow()`: every process
   * compares them, so in production they must be real (`systemClock` gives `Date.now()`).
   * @defaultValue `systemClock`
   */
  readonly clock?: Clock
}

/** The options with their defaults. */
export interface ResolvedNatsOptions {
  readonly name: string
  readonly partitions: number
  readonly workers: number
  readonly maxAckPending: number
  readonly sessionMs: number
  readonly ackWaitMs: number
  readonly leaseMs: number
  readonly maxDeliveries: number
  readonly maxMessages: number
  readonly maxBytes: number
  readonly maxDelayed: number
  readonly maxDeadLetters: number
  readonly duplicateWindowMs: number
  readonly replicas: number
  readonly idempotencyTtlMs: number | undefined
  readonly loop: NonNullable<NatsLoopOptions['loop']>
  readonly onError: (error: unknown) => void
  readonly backpressure: StreamBackpressureOptions | undefined
  readonly clock: Clock
}

const KNOWN = [
  'servers',
  'connection',
  'name',
  'partitions',
  'workers',
  'maxAckPending',
  'sessionMs',
  'ackWaitMs',
  'leaseMarginMs',
  'maxDeliveries',
  'maxMessages',
  'maxBytes',
  'maxDelayed',
  'maxDeadLetters',
  'duplicateWindowMs',
  'replicas',
  'idempotency',
  'loop',
  'onError',
  'backpressure',
  'clock',
] as const

const check = argumentChecks(InvalidArgumentError)

/** Exactly one of `servers` and `connection`; the servers well-formed. */
function checkTarget(options: NatsLoopOptions): void {
  const rule = 'given, or else `connection` (exactly one of them)'
  if ((options.servers === undefined) === (options.connection === undefined)) {
    throw new InvalidArgumentError('options.servers', rule, options.servers)
  }
  if (options.servers !== undefined) checkServers(options.servers)
}

/** Checks every option and fills in the defaults. */
export function resolveOptions(options: NatsLoopOptions): ResolvedNatsOptions {
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options', 'an object', options)
  check.knownKeys('options', options, KNOWN)
  checkTarget(options)
  const name = options.name ?? 'flowing'
  if (typeof name !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(name)) {
    throw new InvalidArgumentError('options.name', '1–64 letters, digits, `_` or `-`', name)
  }
  const ackWaitMs = int('ackWaitMs', options.ackWaitMs, 30_000, 1000)
  const replicas = int('replicas', options.replicas, 1, 1, 5)
  const margin = int('leaseMarginMs', options.leaseMarginMs, Math.max(500, Math.floor(ackWaitMs / 5)), 1)
  if (margin >= ackWaitMs)
    throw new InvalidArgumentError('options.leaseMarginMs', `below ackWaitMs (${ackWaitMs})`, margin)
  return {
    name,
    partitions: int('partitions', options.partitions, 32, 1, 4096),
    workers: int('workers', options.workers, 8, 1, 65_536),
    maxAckPending: int('maxAckPending', options.maxAckPending, 128, 1, 10_000),
    sessionMs: int('sessionMs', options.sessionMs, replicas > 1 ? 20_000 : 6_000, 500),
    ackWaitMs,
    leaseMs: ackWaitMs - margin,
    maxDeliveries: int('maxDeliveries', options.maxDeliveries, 5, 1),
    maxMessages: int('maxMessages', options.maxMessages, 1_000_000, 1),
    maxBytes: options.maxBytes === -1 ? -1 : int('maxBytes', options.maxBytes, -1, 1),
    maxDelayed: int('maxDelayed', options.maxDelayed, 1_000_000, 1),
    maxDeadLetters: int('maxDeadLetters', options.maxDeadLetters, 100_000, 1),
    duplicateWindowMs: int('duplicateWindowMs', options.duplicateWindowMs, 120_000, 1000),
    replicas,
    idempotencyTtlMs: idempotencyTtl(options.idempotency),
    loop: loopOptions(options.loop),
    onError: onError(options.onError),
    backpressure: backpressure(options.backpressure),
    clock: clock(options.clock),
  }
}

function checkServers(servers: unknown): void {
  const list = Array.isArray(servers) ? servers : [servers]
  if (list.length === 0 || !list.every((s) => typeof s === 'string' && s !== '')) {
    throw new InvalidArgumentError('options.servers', 'a non-empty string or array of strings', servers)
  }
}

function int(name: string, value: unknown, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  return value === undefined ? fallback : check.integer(`options.${name}`, value, { min, max })
}

function idempotencyTtl(value: NatsLoopOptions['idempotency']): number | undefined {
  if (value === false) return undefined
  if (value !== undefined && (typeof value !== 'object' || value === null)) {
    throw new InvalidArgumentError('options.idempotency', '`false` or an object `{ ttlMs }`', value)
  }
  check.knownKeys('options.idempotency', value ?? {}, ['ttlMs'])
  return int('idempotency.ttlMs', value?.ttlMs, 86_400_000, 1000)
}

const OWNED = ['capacity', 'store', 'idempotency', 'workers', 'maxDelayed', 'clock']
const TOP_LEVEL = ['workers', 'clock']

function loopOptions(value: unknown): NonNullable<NatsLoopOptions['loop']> {
  if (value === undefined) return {}
  if (typeof value !== 'object' || value === null) throw new InvalidArgumentError('options.loop', 'an object', value)
  const owned = Object.keys(value).find((k) => OWNED.includes(k))
  if (owned !== undefined) {
    throw new InvalidArgumentError(
      `options.loop.${owned}`,
      'left out: the NATS loop sets it',
      (value as never)[owned],
      {
        hint: TOP_LEVEL.includes(owned)
          ? `give \`${owned}\` at the top level`
          : 'the streams bound and keep messages here',
      },
    )
  }
  return value as NonNullable<NatsLoopOptions['loop']>
}

function onError(value: unknown): (error: unknown) => void {
  if (value === undefined)
    return (error) => console.warn(`[flowing/nats] ${(error as Error)?.message ?? String(error)}`)
  if (typeof value !== 'function') throw new InvalidArgumentError('options.onError', 'a function', value)
  // A throwing listener must not break the loop that tells it.
  return (error) => {
    try {
      value(error)
    } catch {}
  }
}

function backpressure(value: unknown): StreamBackpressureOptions | undefined {
  if (value === undefined || value === false) return undefined
  if (value === true) return {}
  if (typeof value !== 'object' || value === null) {
    throw new InvalidArgumentError('options.backpressure', 'a boolean or an object of watermarks', value)
  }
  const { shedAbove, intervalMs, ...marks } = value as StreamBackpressureOptions
  if (shedAbove !== undefined && !(Number.isInteger(shedAbove) && shedAbove >= 0 && shedAbove <= 9)) {
    throw new InvalidArgumentError('options.backpressure.shedAbove', 'an integer from 0 to 9', shedAbove)
  }
  int('backpressure.intervalMs', intervalMs, 250, 10)
  new WatermarkController(marks) // its own checks: unknown marks, marks out of order
  return value as StreamBackpressureOptions
}

const CLOCK_METHODS = ['now', 'setTimeout', 'clearTimeout', 'setImmediate'] as const

function clock(value: unknown): Clock {
  if (value === undefined) return systemClock
  if (typeof value !== 'object' || value === null) throw new InvalidArgumentError('options.clock', 'a Clock', value)
  for (const name of CLOCK_METHODS) {
    const fn = (value as Record<string, unknown>)[name]
    if (typeof fn !== 'function') throw new InvalidArgumentError(`options.clock.${name}`, 'a function', fn)
  }
  return value as Clock
}
