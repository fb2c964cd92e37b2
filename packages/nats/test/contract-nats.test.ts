/**
 * The transport contract on `@flowing/nats` against a private nats-server: each process a
 * `createNatsLoop` of the case's name, with a connection of its own through a TCP proxy (a kill cuts
 * it). Property runs are few: each opens a loop on the real server.
 */
import { natsTransport } from './contract/nats-adapter.js'
import { transportContract } from './contract/transport-contract.js'
import { describeNats, useNatsServer } from './server.js'

describeNats('NATS JetStream', () => {
  const server = useNatsServer()
  transportContract('NATS loop (a private nats-server)', natsTransport(server), {
    runs: 6,
  })
})
