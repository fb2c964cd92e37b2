/**
 * Posts with a job key: the key is claimed in the bucket first (so the message it replaces is stale
 * from then on), then the message is published, delayed until the due time its mode says; a publish
 * that fails gives the key back.
 *
 * @module
 */
import type { PostOptions } from '@flowing/core'
import { JOB_KEY_HEADER, type JobPost, type NatsJobs } from './job-keys.js'

/** A post's options without its job-key ones, and those apart (undefined: no job key). */
export function splitJobOptions<O extends PostOptions>(
  options: O | undefined,
): { post: O | undefined; job: JobPost | undefined } {
  if (options?.jobKey === undefined) return { post: options, job: undefined }
  const { jobKey, jobKeyMode, maxWaitMs, ...rest } = options
  const headers = { ...rest.headers, [JOB_KEY_HEADER]: jobKey }
  return { post: { ...rest, headers } as unknown as O, job: { jobKey, jobKeyMode, maxWaitMs } }
}

/**
 * Claims `job.jobKey` for message `id`, then publishes it through `send` (`dueAt`: epoch ms, undefined
 * for at once) — delayed when its mode makes it due later than `now`.
 */
export async function publishKeyed(
  jobs: NatsJobs,
  job: JobPost,
  id: string,
  dueAt: number | undefined,
  now: number,
  send: (dueAt: number | undefined) => Promise<void>,
): Promise<void> {
  const { due, undo } = await jobs.claim(job, id, dueAt)
  try {
    await send(due !== undefined && due > now ? due : undefined)
  } catch (error) {
    await undo().catch(() => {})
    throw error
  }
}
