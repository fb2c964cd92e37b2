/**
 * The contract's cases that need more than one process alive at once or a broker: consumer groups,
 * reconnecting to a restarted broker. An implementation without the capability reports them N/A.
 */
import { expect } from 'vitest'
import { expectAtLeastOnceInKeyOrder, expectExactlyOnceInKeyOrder, Log, sleep, until } from './helpers.js'
import type { ContractMessages, TransportUnderTest } from './transport.js'
import type { Kit } from './transport-contract.js'

type Step = ContractMessages['step']

/** Registers the consumer-group and reconnect cases. */
export function distributedCases(kit: Kit): void {
  kit.case(
    'consumer groups: two processes of one group share the work, each message once, keys in order',
    async () => {
      const a = await kit.make()
      const b = kit.track(await required(a.peer, 'peer').call(a))
      const log = new Log()
      a.on('step', log.handler('a', 3))
      b.on('step', log.handler('b', 3))
      await Promise.all([a.start(), b.start()])
      const posted = Array.from({ length: 80 }, (_, n): Step => ({ key: `k${n % 16}`, n }))
      for (const step of posted) await a.post('step', step, { key: step.key })
      await Promise.all([a.drain(), b.drain()])
      expectExactlyOnceInKeyOrder(log, posted)
      const share = (by: string) => log.succeeded.filter((s) => s.by === by).length
      expect(share('a')).toBeGreaterThan(0)
      expect(share('b')).toBeGreaterThan(0)
    },
    'crossProcess',
  )
  kit.case(
    'reconnect: the broker restarts mid-stream and nothing is lost (at least once, keys in order)',
    async () => {
      const a = await kit.make()
      const log = new Log()
      a.on('step', log.handler('a', 5))
      await a.start()
      const posted = Array.from({ length: 60 }, (_, n): Step => ({ key: `k${n % 3}`, n }))
      for (const step of posted.slice(0, 30)) await a.post('step', step, { key: step.key })
      await until('5 handled before the restart', () => log.succeeded.length >= 5)
      const restarted = required(a.restartBroker, 'restartBroker').call(a)
      // A producer's duty across an outage: a post that failed is posted again under the same
      // idempotency key, until stored or known stored (`duplicate`).
      for (const step of posted.slice(30)) await postUntilStored(a, step)
      await restarted
      await a.drain()
      expectAtLeastOnceInKeyOrder(log, posted)
    },
    'reconnect',
  )
  kit.case(
    'reconnect: a drain() called as the broker comes back waits for the reconnection instead of failing',
    async () => {
      const a = await kit.make()
      const log = new Log()
      a.on('step', log.handler('a'))
      await a.start()
      const posted = Array.from({ length: 5 }, (_, n): Step => ({ key: 'k', n }))
      for (const step of posted) await a.post('step', step, { key: step.key })
      await a.drain()
      await required(a.restartBroker, 'restartBroker').call(a, { reconnected: false })
      await a.drain()
      expectExactlyOnceInKeyOrder(log, posted)
    },
    'reconnect',
  )
}

// A method the case's capability promises.
function required<F>(method: F | undefined, name: string): F {
  if (method === undefined) throw new Error(`the transport declares the capability but has no ${name}()`)
  return method
}

async function postUntilStored(t: TransportUnderTest<ContractMessages>, step: Step): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await t.post('step', step, { key: step.key, idempotencyKey: `step-${step.n}` })
      return
    } catch (error) {
      if (attempt === 10) throw error
      await sleep(50)
    }
  }
}
