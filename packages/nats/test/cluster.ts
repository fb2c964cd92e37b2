/**
 * A private three-node nats-server cluster per test file, never a mock: three {@link NatsServer}s of
 * test/server.ts on 127.0.0.1 (free client ports, free route ports), each with its own JetStream store
 * and log under a temp directory of its own, its own `server_name` (`n0`, `n1`, `n2`), one cluster
 * name, and routes to the other two. A node can be killed (`SIGKILL`, store kept), restarted on the
 * same ports and store, frozen and thawed — the failures a transport on a cluster must survive.
 * Without a `nats-server` binary the suites skip (`describeNats`, test/server.ts).
 */
import { jetstreamManager } from '@nats-io/jetstream'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { afterAll, beforeAll } from 'vitest'
import { freePort, NatsServer } from './server.js'

/** Nodes in the cluster: three, so one may be down and the rest keep a quorum. */
export const NODES = 3

// How long the three take to elect a JetStream meta leader, or a restarted node to rejoin (≈ 0.3 s idle).
const READY_TIMEOUT_MS = 30_000

/** Three nats-servers routed into one JetStream cluster. */
export class NatsCluster {
  /** The cluster's name (its nodes' `cluster_name`). */
  readonly name: string
  /** The nodes, by index: `n0`, `n1`, `n2`. */
  readonly nodes: readonly NatsServer[]
  /** Each node's `server_name`, by index: what a stream's `cluster.leader` and `replicas[].name` say. */
  readonly names: readonly string[]

  private constructor(name: string, nodes: readonly NatsServer[], names: readonly string[]) {
    this.name = name
    this.nodes = nodes
    this.names = names
  }

  /**
   * Starts three nodes at once (none has a quorum alone) and waits until each answers a JetStream
   * request — which needs a meta leader.
   * @throws when there is no nats-server binary, or the cluster does not come up within 30 s (the
   *   message quotes each failed node's log)
   */
  static async start(): Promise<NatsCluster> {
    for (let attempt = 1; ; attempt++) {
      const ports = await distinctFreePorts(2 * NODES)
      const client = ports.slice(0, NODES)
      const route = ports.slice(NODES)
      const name = `flowing-test-${process.pid}`
      const names = Array.from({ length: NODES }, (_, i) => `n${i}`)
      const started = await Promise.allSettled(
        names.map((serverName, i) =>
          NatsServer.start({
            port: client[i] as number,
            readyTimeoutMs: READY_TIMEOUT_MS,
            args: [
              '--server_name',
              serverName,
              '--cluster_name',
              name,
              '--cluster',
              `nats://127.0.0.1:${route[i]}`,
              '--routes',
              route
                .filter((_, j) => j !== i)
                .map((p) => `nats://127.0.0.1:${p}`)
                .join(','),
            ],
          }),
        ),
      )
      const nodes = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []))
      if (nodes.length === NODES) return new NatsCluster(name, nodes, names)
      await Promise.all(nodes.map((n) => n.stop()))
      const why = started
        .map((s, i) => (s.status === 'rejected' ? `node ${names[i]}: ${(s.reason as Error).message}` : undefined))
        .filter((m) => m !== undefined)
        .join('\n\n')
      // A port taken between freePort() and the server's bind: try other ports, twice.
      if (attempt === 3 || !/address already in use|exited/i.test(why)) {
        throw new Error(`the ${NODES}-node nats cluster did not come up:\n${why}`)
      }
    }
  }

  /** Every node's client address, `127.0.0.1:<port>`, as `connect({ servers })` and `createNatsLoop` take them. */
  get urls(): string[] {
    return this.nodes.map((n) => n.url)
  }

  /** The node of a `server_name` (a stream's `cluster.leader`), by index. */
  indexOf(serverName: string): number {
    const i = this.names.indexOf(serverName)
    if (i < 0) throw new Error(`no node named ${serverName} in ${this.names.join(', ')}`)
    return i
  }

  /** Kills node `i` at once (`SIGKILL`): a crash. Its store stays for {@link NatsCluster.restart}. */
  kill9(i: number): void {
    this.#node(i).kill9()
  }

  /**
   * Starts node `i` again (stopping it first if it runs) on the same ports and store, and waits until
   * it answers JetStream requests again (it has rejoined a meta leader).
   */
  async restart(i: number): Promise<void> {
    await this.#node(i).restart()
  }

  /** Freezes node `i` (`SIGSTOP`): its sockets stay open and nothing answers. */
  freeze(i: number): void {
    this.#node(i).freeze()
  }

  /** Lets a frozen node run again (`SIGCONT`). */
  thaw(i: number): void {
    this.#node(i).thaw()
  }

  /** The `server_name` of a stream's leader now, asked through `nc` (retried while an election runs). */
  async leaderOf(nc: NatsConnection, stream: string, timeoutMs = 10_000): Promise<string> {
    const jsm = await jetstreamManager(nc, { timeout: 2_000 })
    for (const end = Date.now() + timeoutMs; ; await new Promise((r) => setTimeout(r, 50))) {
      const leader = await jsm.streams
        .info(stream)
        .then((info) => info.cluster?.leader)
        .catch(() => undefined)
      if (leader !== undefined && leader !== '') return leader
      if (Date.now() > end) throw new Error(`stream ${stream} has no leader after ${timeoutMs} ms`)
    }
  }

  /** Stops every node (`SIGTERM`, `SIGKILL` after 5 s) and removes their temp directories. */
  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.stop()))
  }

  /** A connection to every node (the client picks one and fails over to the others). */
  connect(): Promise<NatsConnection> {
    return connect({ servers: this.urls, maxReconnectAttempts: -1 })
  }

  #node(i: number): NatsServer {
    const node = this.nodes[i]
    if (node === undefined) throw new Error(`no node ${i}: the cluster has ${NODES}`)
    return node
  }
}

// `count` free ports of 127.0.0.1, all different (freePort() alone may give one twice once let go).
async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>()
  while (ports.size < count) ports.add(await freePort())
  return [...ports]
}

/**
 * The file's cluster: started in `beforeAll`, stopped (and its directories removed) in `afterAll`.
 * Call it inside a `describeNats` callback; the getter throws if read before `beforeAll` ran.
 */
export function useNatsCluster(): () => NatsCluster {
  let cluster: NatsCluster | undefined
  beforeAll(async () => {
    cluster = await NatsCluster.start()
  }, 3 * READY_TIMEOUT_MS)
  afterAll(async () => {
    await cluster?.stop()
  })
  return () => {
    if (cluster === undefined) throw new Error('useNatsCluster(): the cluster is read before beforeAll started it')
    return cluster
  }
}
