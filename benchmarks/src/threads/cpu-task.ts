/**
 * The handler module of the `threads` suite, loaded by plain Node on every thread (compiled to
 * `dist/threads/cpu-task.js`) and imported by the loop for the in-loop rows: one function, so every
 * row runs the same work.
 *
 * @module
 */
import { createHash } from 'node:crypto'

/** One CPU-bound message: `rounds` chained SHA-256 digests from `seed`. */
export interface CpuJob {
  /** The message's index (comes back in the result, for the exactly-once check). */
  readonly i: number
  readonly rounds: number
  readonly seed: number
}

/** What a CPU-bound message answers: its index and the final digest. */
export interface CpuResult {
  readonly i: number
  readonly digest: string
}

/** The fixed hashing loop: each round hashes the previous digest. */
export function hashChain(rounds: number, seed: number): string {
  let digest = Buffer.from(String(seed))
  for (let r = 0; r < rounds; r++) digest = createHash('sha256').update(digest).digest()
  return digest.toString('hex')
}

/** The CPU-bound handler — `threaded()`'s default export and plain piscina's task function alike. */
export default function cpuTask(job: CpuJob): CpuResult {
  return { i: job.i, digest: hashChain(job.rounds, job.seed) }
}

/** The payload-cost handler: answers how much arrived (bytes of a typed array, rows of an object). */
export function measure(payload: Uint8Array | { readonly rows: readonly unknown[] }): number {
  return payload instanceof Uint8Array ? payload.byteLength : payload.rows.length
}
