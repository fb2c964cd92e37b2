/**
 * What other publishers can put in the streams, and messages no process can take: a message that is
 * not Flowing's is terminated and counted (the partition moves on); a type no handler is registered
 * for is handed back, and after `maxDeliveries` deliveries without an outcome it goes to the dead
 * letters without running; an `onError` listener that throws breaks nothing.
 */
import { jetstream } from '@nats-io/jetstream'
import { connect } from '@nats-io/transport-node'
import { afterEach, expect, it } from 'vitest'
import { createNatsLoop, type NatsLoop } from '../src/index.js'
import { describeNats, useNatsServer } from './server.js'

interface Messages {
  ok: { n: number }
  orphan: { n: number }
}

describeNats('hostile messages in the streams', () => {
  const server = useNatsServer()
  const open: NatsLoop<Messages>[] = []
  afterEach(async () => {
    await Promise.all(open.splice(0).map((l) => l.stop({ deadlineMs: 0 })))
  })

  it('terminates a message that is not Flowing’s and goes on with the partition', async () => {
    const loop = await createNatsLoop<Messages>({ servers: server().url, name: 'hostile1', partitions: 1 })
    open.push(loop)
    const ran: number[] = []
    loop.on('ok', (m) => void ran.push(m.payload.n))
    const nc = await connect({ servers: server().url })
    await jetstream(nc).publish('hostile1.work.0', 'not json, no headers')
    await nc.close()
    await loop.post('ok', { n: 1 })
    await loop.start()
    await loop.drain()
    expect(ran).toEqual([1])
    expect(loop.metrics()).toMatchObject({ undecodable: 1, acked: 1 })
  })

  it('dead-letters a type no process handles after maxDeliveries, without running it', async () => {
    const errors: unknown[] = []
    const loop = await createNatsLoop<Messages>({
      servers: server().url,
      name: 'hostile2',
      partitions: 1,
      maxDeliveries: 3,
      onError: (e) => {
        errors.push(e)
        throw new Error('a listener that throws')
      },
    })
    open.push(loop)
    loop.on('ok', () => {})
    await loop.post('orphan', { n: 1 }, { key: 'x' })
    await loop.post('ok', { n: 2 }, { key: 'x' })
    await loop.start()
    await loop.drain()
    const letters = await loop.deadLetters.list()
    expect(letters.map((l) => [l.type, l.error.name])).toEqual([['orphan', 'DeliveryLimitError']])
    expect(letters[0]?.error).toMatchObject({
      code: 'ERR_FLOWING_NATS_DELIVERY_LIMIT',
      message: 'delivered 4 times without an outcome (maxDeliveries 3)',
      errorClass: 'unknown',
    })
    expect(errors.length).toBe(3) // each refused admission was told
    expect(loop.metrics()).toMatchObject({ nakked: 3, deadLettered: 1 })
  }, 20_000)
})
