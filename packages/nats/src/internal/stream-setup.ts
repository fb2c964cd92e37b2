/**
 * Making a loop's streams and consumers idempotently: what exists is checked (its subjects, the
 * partition count it was made for) and updated to this process's bounds, what is missing is created.
 *
 * @module
 */
import { AckPolicy, DeliverPolicy, type JetStreamManager, type StreamConfig, type StreamInfo } from '@nats-io/jetstream'
import { TopologyError } from '../errors.js'

const MS = 1_000_000 // nanoseconds

// The info of stream `name`, or undefined when there is none.
function streamInfo(jsm: JetStreamManager, name: string): Promise<StreamInfo | undefined> {
  return jsm.streams.info(name).catch((error: unknown) => {
    if ((error as { code?: number }).code === 10059) return undefined // stream not found
    throw error
  })
}

// Earlier versions had the partitions share one stream, whose subjects the partitions' own would overlap.
export async function refuseSharedWorkStream(jsm: JetStreamManager, name: string): Promise<void> {
  if ((await streamInfo(jsm, name)) === undefined) return
  throw new TopologyError(
    name,
    'it is the single work stream of an earlier version (now one stream per partition, ' +
      '`<name>-work-<partition>`); let its processes drain it, then delete it (`nats stream rm`)',
  )
}

export async function ensureStream(
  jsm: JetStreamManager,
  config: Partial<StreamConfig> & { name: string },
): Promise<void> {
  const found = await streamInfo(jsm, config.name)
  if (found === undefined) {
    await jsm.streams.add(config)
    return
  }
  const subjects = found.config.subjects ?? []
  if (JSON.stringify(subjects) !== JSON.stringify(config.subjects)) {
    throw new TopologyError(config.name, `its subjects are ${subjects.join(', ')}, not ${config.subjects?.join(', ')}`)
  }
  if (config.description !== undefined && found.config.description !== config.description) {
    throw new TopologyError(
      config.name,
      `it was made as "${found.config.description ?? ''}" and this process asks for "${config.description}" — ` +
        'processes that disagree on the partition count would break per-key order; drain the stream and ' +
        'delete it to change P',
    )
  }
  if (!differs(found.config, config)) return // as this process would have it: nothing to write
  await jsm.streams.update(config.name, { ...config, subjects }).catch(async (error: unknown) => {
    // A cluster can refuse an update made while another process creates or updates the same streams
    // ("subjects overlap"): once more, after a moment.
    if ((error as { code?: number }).code !== 10065) throw error
    await new Promise((resolve) => setTimeout(resolve, 250))
    await jsm.streams.update(config.name, { ...config, subjects })
  })
}

// Whether a field this process sets differs from the stream's.
function differs(found: StreamConfig, wanted: Partial<StreamConfig>): boolean {
  const has = found as unknown as Record<string, unknown>
  return Object.entries(wanted).some(([field, value]) => JSON.stringify(has[field]) !== JSON.stringify(value))
}

export async function ensureConsumer(
  jsm: JetStreamManager,
  stream: string,
  durable: string,
  subject: string | undefined,
  maxAckPending: number,
  ackWaitMs: number,
): Promise<void> {
  const config = {
    durable_name: durable,
    ...(subject === undefined ? {} : { filter_subject: subject }),
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    max_ack_pending: maxAckPending,
    ack_wait: ackWaitMs * MS,
    max_deliver: -1, // the loop caps deliveries itself (`maxDeliveries`): the server would drop silently
    max_waiting: 4096,
  }
  const found = await jsm.consumers.info(stream, durable).catch((error: unknown) => {
    if ((error as { code?: number }).code === 10014) return undefined // consumer not found
    throw error
  })
  if (found === undefined) {
    await jsm.consumers.add(stream, config)
    return
  }
  if (found.config.max_ack_pending !== maxAckPending) {
    await jsm.consumers.update(stream, durable, { max_ack_pending: maxAckPending })
  }
}
