/** What test/processes.test.ts and its worker processes (worker.ts) share. */

/** What the test passes as the one argument (JSON). */
export interface WorkerConfig {
  readonly url: string
  readonly name: string
  readonly partitions: number
  readonly ackWaitMs: number
  /** How long a process that stops renewing its membership keeps its partitions. */
  readonly sessionMs: number
  readonly workers: number
  /** Where the effects (one file per idempotency key) and the markers go. */
  readonly dir: string
  /** This process's log file. */
  readonly log: string
}

/** How a probe message behaves (see worker.ts). */
export type Probe = 'freeze' | 'kill' | 'stale'

/** The one message type. */
export interface WorkMessages {
  work: { key: string; seq: number; probe?: Probe }
}

/** The id of a message: its idempotency key and its effect's file name. */
export const idOf = (key: string, seq: number): string => `${key}-${seq}`
