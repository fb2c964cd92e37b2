import { existsSync } from 'node:fs'
import { jetstreamManager } from '@nats-io/jetstream'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { accepting, describeNats, NatsServer } from './server.js'

const opened: NatsConnection[] = []
const started: NatsServer[] = []

afterEach(async () => {
  await Promise.all(opened.splice(0).map((nc) => nc.close().catch(() => {})))
  await Promise.all(started.splice(0).map((s) => s.stop()))
})

async function start(): Promise<NatsServer> {
  const server = await NatsServer.start()
  started.push(server)
  return server
}

async function open(server: NatsServer): Promise<NatsConnection> {
  const nc = await connect({ servers: server.url, reconnect: false, timeout: 2_000 })
  opened.push(nc)
  return nc
}

describeNats('NatsServer', () => {
  describe('start() / stop()', () => {
    it('serves JetStream on 127.0.0.1 at its port, and stop() frees the port and removes its store', async () => {
      const server = await start()
      expect(server.url).toBe(`127.0.0.1:${server.port}`)
      const jsm = await jetstreamManager(await open(server))
      expect((await jsm.getAccountInfo()).streams).toBe(0)
      expect(existsSync(server.storeDir)).toBe(true)
      await server.stop()
      expect(await accepting(server.port)).toBe(false)
      expect(existsSync(server.storeDir)).toBe(false)
    })

    it('gives two servers two ports', async () => {
      const [a, b] = await Promise.all([start(), start()])
      expect(a.port).not.toBe(b.port)
    })
  })

  describe('restart()', () => {
    it('comes back on the same port with the JetStream data it had (a stream and its messages)', async () => {
      const server = await start()
      const nc = await open(server)
      const jsm = await jetstreamManager(nc)
      await jsm.streams.add({ name: 'KEEP', subjects: ['keep.>'] })
      await jsm.jetstream().publish('keep.one', 'hello')
      await nc.close()
      await server.restart()
      const after = await jetstreamManager(await open(server))
      const info = await after.streams.info('KEEP')
      expect(info.state.messages).toBe(1)
      expect((await after.streams.getMessage('KEEP', { seq: 1 }))?.string()).toBe('hello')
    })
  })

  describe('kill9()', () => {
    it('crashes the server (connections close, the port refuses) and restart() recovers the store', async () => {
      const server = await start()
      const nc = await open(server)
      const jsm = await jetstreamManager(nc)
      await jsm.streams.add({ name: 'CRASH', subjects: ['crash.>'] })
      await jsm.jetstream().publish('crash.one', 'x')
      const closed = nc.closed()
      server.kill9()
      await closed
      // The client may see its socket drop a moment before the dying process lets go of the port.
      await vi.waitFor(async () => expect(await accepting(server.port)).toBe(false), { timeout: 2_000, interval: 20 })
      await server.restart()
      const info = await (await jetstreamManager(await open(server))).streams.info('CRASH')
      expect(info.state.messages).toBe(1)
    })
  })

  describe('freeze() / thaw()', () => {
    it('freezes the server (requests time out, the socket stays open) until thawed', async () => {
      const server = await start()
      const nc = await open(server)
      const jsm = await jetstreamManager(nc, { timeout: 300 })
      server.freeze()
      await expect(jsm.getAccountInfo()).rejects.toThrow()
      expect(nc.isClosed()).toBe(false)
      server.thaw()
      expect((await jsm.getAccountInfo()).streams).toBe(0)
    })

    it('stop() ends a frozen server too', async () => {
      const server = await start()
      server.freeze()
      await server.stop()
      expect(await accepting(server.port)).toBe(false)
    })
  })
})
