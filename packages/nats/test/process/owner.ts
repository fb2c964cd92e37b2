/**
 * One member of a loop's partition ownership, in its own process (spawned by ownership.test.ts):
 * reports each partition it gains and loses as a JSON line on stdout, with wall-clock times
 * (`performance.timeOrigin + performance.now()`, comparable across processes on one machine). A loss
 * is dated at the end of the right to hold it — for a lapsed session (also during a graceful release),
 * when it lapsed, not when the thawed or starved process noticed. Stops gracefully on a `stop` line
 * on stdin.
 *
 * argv[2]: JSON { port, name, partitions, sessionMs, releaseMs, tag } — a graceful release takes releaseMs
 */
import { createInterface } from 'node:readline'
import { systemClock } from '@flowing/core'
import { connect } from '@nats-io/transport-node'
import { Ownership } from '../../src/internal/ownership.js'

const config = JSON.parse(process.argv[2] as string) as {
  port: number
  name: string
  partitions: number
  sessionMs: number
  releaseMs: number
  tag: string
}
const wall = (monotonic: number) => performance.timeOrigin + monotonic
const say = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify({ tag: config.tag, ...line })}\n`)

const nc = await connect({ servers: `127.0.0.1:${config.port}`, maxReconnectAttempts: -1 })
let ownership: Ownership | undefined
ownership = await Ownership.open(
  nc,
  { ...config, replicas: 1, clock: systemClock, report: () => {} },
  {
    async gained(p, token) {
      say({ event: 'gained', p, token, at: wall(performance.now()) })
    },
    async lost(p, graceful) {
      // A graceful release waits for the partition's running messages, as the runner's does.
      if (graceful) await new Promise((resolve) => setTimeout(resolve, config.releaseMs))
      // The right ends when the release does, or earlier if the session lapsed meanwhile (a process
      // starved of CPU past its session): `holds()` is false from then on, so it can act no more.
      const until = Math.min(performance.now(), ownership?.validUntil() ?? 0)
      say({ event: 'lost', p, graceful, at: wall(until) })
    },
  },
)
await ownership.start()
say({ event: 'ready', at: wall(performance.now()) })
createInterface({ input: process.stdin }).on('line', async (line) => {
  if (line !== 'stop') return
  await ownership?.stop()
  say({ event: 'stopped', at: wall(performance.now()) })
  await nc.close()
  process.exit(0)
})
