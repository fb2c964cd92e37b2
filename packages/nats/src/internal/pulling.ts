/**
 * An owned partition's consumer loop: its own durable consumer, read in batches, each message handed
 * to the runner in stream order.
 *
 * @module
 */
import type { MessageMap } from '@flowing/core'
import type { ConsumerMessages, JsMsg } from '@nats-io/jetstream'
import type { Owned, RunnerParts } from './runner-parts.js'
import { pause } from './timers.js'

// How long a pull waits at the server. The client also waits this long between its checks of a
// consumer that did not answer after a reconnection (a server still loading its JetStream): it bounds
// how long a restarted server leaves a partition idle.
const PULL_EXPIRES_MS = 5000

/** What a partition's loop works with. */
export interface PullHost
  extends Pick<RunnerParts<MessageMap>, 'js' | 'jsm' | 'topology' | 'maxAckPending' | 'clock' | 'report'> {
  /** Takes one message of the partition (the next one waits for the promise it may return). */
  readonly receive: (jm: JsMsg, o: Owned) => Promise<void> | undefined
}

/** The messages of partition `p`'s consumer under `token`, up to `maxAckPending` (256 at most) per batch. */
export function consumePartition(
  host: Pick<PullHost, 'js' | 'topology' | 'maxAckPending'>,
  p: number,
  token: number,
): Promise<ConsumerMessages> {
  const { js, topology, maxAckPending } = host
  return js.consumers
    .get(topology.stream(p), topology.consumer(p, token))
    .then((c) => c.consume({ max_messages: Math.min(256, maxAckPending), expires: PULL_EXPIRES_MS }))
}

/**
 * One partition's loop: takes its messages in stream order and hands each to `receive`. The client
 * re-pulls across reconnects by itself; if the iteration still ends or breaks, it starts over while
 * the partition is pulled (`o.pulling`).
 */
export async function pullPartition(o: Owned, host: PullHost): Promise<void> {
  while (o.pulling) {
    try {
      for await (const jm of o.iterator) {
        if (!o.pulling) continue // not acked: the next owner's consumer gets it
        const taking = host.receive(jm, o)
        if (taking !== undefined) await taking
      }
    } catch (error) {
      host.report(error)
    }
    if (!o.pulling) return
    await pause(host.clock, 500)
    o.iterator = await consumePartition(host, o.p, o.token).catch((error: unknown) => {
      host.report(error)
      return o.iterator
    })
  }
}

/**
 * Remakes partition `o`'s consumer afresh — what it handed out and was not acknowledged comes again,
 * in stream order — trying until the server answers or the partition is no longer `owned()`.
 */
export async function remakeConsumer(o: Owned, host: PullHost, owned: () => boolean): Promise<void> {
  while (owned()) {
    try {
      await host.topology.own(host.jsm, o.p, o.token, host.maxAckPending, true)
      o.iterator = await consumePartition(host, o.p, o.token)
      o.delivered = 0 // a new consumer counts its deliveries from 1
      return
    } catch (error) {
      host.report(error)
      await pause(host.clock, 500)
    }
  }
}
