/**
 * What the parent and a worker process of the NATS suite (and the cluster example) say to each other
 * over IPC, and the clock both read: `performance.timeOrigin + performance.now()`, milliseconds since
 * the Unix epoch with sub-millisecond resolution — one machine, one clock, so a publish time taken in
 * one process and a handler start taken in another can be subtracted.
 *
 * @module
 */

/** The epoch clock every process of a run shares (ms, fractional). */
export function epochNow(): number {
  return performance.timeOrigin + performance.now()
}

/** The one message type: a no-op job (or, with `hold`, one that waits for a `release`). */
export interface JobPayload {
  /** Key index: the message's key is `key-<ki>`. */
  readonly ki: number
  /** Its sequence number within its key (0, 1, 2 … in publish order). */
  readonly ks: number
  /** Its sequence number in the run. */
  readonly seq: number
  /** When it was published ({@link epochNow}). */
  readonly at: number
  /** Hold the handler until the parent sends `release` (the kill episodes). */
  readonly hold?: boolean
}

/** The messages of the loop. */
export interface JobMessages {
  job: JobPayload
  [type: string]: unknown
}

/** How a worker makes its loop. */
export interface WorkerConfig {
  /** One server, or every node of a cluster. */
  readonly servers: string | readonly string[]
  readonly name: string
  readonly partitions: number
  readonly workers: number
  readonly ackWaitMs: number
  /** How long each `job` handler takes (an awaited timer; 0: a no-op). */
  readonly handlerMs?: number
  /** Stream and bucket replicas (3 on the 3-node cluster). @defaultValue 1 */
  readonly replicas?: number
  /** Print one line per held message, and send `progress` every 100 ms (the cluster example). */
  readonly verbose?: boolean
}

/** Parent → worker. */
export type Command =
  | { readonly type: 'config'; readonly config: WorkerConfig }
  | { readonly type: 'start' }
  | { readonly type: 'release' }
  | { readonly type: 'report' }
  | { readonly type: 'stop' }

/** What a worker ran: flat arrays, one entry per handler start (redeliveries included). */
export interface Records {
  readonly ki: number[]
  readonly ks: number[]
  readonly seq: number[]
  /** Handler start ({@link epochNow}). */
  readonly start: number[]
  /** Post time carried by the message. */
  readonly posted: number[]
  /** Handler end and acknowledgement sent (`succeeded`; the ack goes out in the same turn), per start. */
  readonly end: number[]
}

/** The transport counters of a worker, from `metrics()`. */
export interface WorkerCounters {
  readonly received: number
  readonly acked: number
  readonly nakked: number
  readonly redelivered: number
  readonly fenced: number
  readonly leasesLost: number
  /** CPU time of the process so far (user + system, ms). */
  readonly cpuMs: number
}

/** Worker → parent. */
export type Report =
  | { readonly type: 'ready'; readonly pid: number }
  | { readonly type: 'started'; readonly at: number }
  | { readonly type: 'holding'; readonly pid: number; readonly seq: number; readonly at: number }
  | { readonly type: 'report'; readonly records: Records; readonly counters: WorkerCounters }
  | { readonly type: 'progress'; readonly pid: number; readonly ran: number }
  | { readonly type: 'stopped'; readonly handedBack: number }
  | { readonly type: 'failed'; readonly error: string }
