/**
 * `node dist/enqueue.js [--smoke]`: transactional enqueue on a private PostgreSQL (`fsync=on`) — what
 * an enqueue adds to the application's transaction, next to a plain INSERT of a similar row and to
 * pg-boss's `send` in the same transaction; and the commit-to-start latency of enqueued messages in a
 * loop of the journal. Writes RESULTS-enqueue.md (not with `--smoke`). Fails (exit 1) when a message
 * does not start exactly once — never on speed.
 *
 * @module
 */
import { writeFileSync } from 'node:fs'
import { createEnqueuer, postgresStore } from '@flowing/postgres'
import pg from 'pg'
import { type PgServer, startPostgres } from './durable/servers.js'
import { quantile } from './durable/workload.js'
import { candidates, createAppTables, measureCost, type Signup, startBoss } from './enqueue/cost.js'
import { type LatencyMode, type LatencySample, measureLatency } from './enqueue/latency.js'
import { BenchError } from './lib/check.js'
import { UsageError } from './lib/cli.js'
import { codeRevision, describeMachine, formatMachine } from './lib/machine.js'
import { runSuite } from './lib/run-suite.js'
import { formatMs } from './lib/stats.js'
import { renderTable } from './lib/table.js'

const RESULTS = new URL('../RESULTS-enqueue.md', import.meta.url)
const USAGE = 'usage: node dist/enqueue.js [--smoke]'
const JOURNAL = 'signups'

interface Sizes {
  readonly rounds: number
  readonly perRound: number
  readonly latency: number
}

async function main(args: string[]): Promise<void> {
  const unknown = args.filter((a) => a !== '--smoke')
  if (unknown.length > 0) throw new UsageError(`Unknown argument \`${unknown[0]}\``)
  const smoke = args.includes('--smoke')
  const sizes: Sizes = smoke ? { rounds: 1, perRound: 20, latency: 20 } : { rounds: 5, perRound: 400, latency: 1_000 }
  const started = performance.now()
  const postgres = await startPostgres()
  if (!postgres.ok) throw new BenchError(`no PostgreSQL: ${postgres.reason}`)
  try {
    const figures = await run(postgres.server, sizes)
    console.log(`\n${figures.cost}\n\n${figures.latency}`)
    if (smoke) return
    const machine = formatMachine(describeMachine())
    writeFileSync(RESULTS, document(postgres.server, sizes, figures, machine, (performance.now() - started) / 1000))
    console.log(`\nWrote ${RESULTS.pathname}`)
  } finally {
    await postgres.server.stop()
  }
}

async function run(server: PgServer, sizes: Sizes): Promise<{ cost: string; latency: string }> {
  const client = new pg.Client({ connectionString: server.url })
  await client.connect()
  try {
    await createAppTables(client)
    await (await postgresStore({ connectionString: server.url, journal: JOURNAL })).close() // the journal exists
    const boss = await startBoss(server.url)
    const enqueuer = createEnqueuer<Signup>({ journal: JOURNAL, types: ['email.welcome'] })
    const list = candidates(enqueuer, boss)
    console.log(`Cost in a transaction: ${sizes.rounds} rounds × ${sizes.perRound} transactions per candidate …`)
    await measureCost(client, list, 1, Math.min(100, sizes.perRound)) // warm-up
    const cost = await measureCost(client, list, sizes.rounds, sizes.perRound)
    await boss.stop({ graceful: false })
    const latencies: LatencySample[] = []
    for (const mode of ['one at a time', 'back to back'] as const satisfies readonly LatencyMode[]) {
      console.log(`Commit to start, ${mode}: ${sizes.latency} messages …`)
      const store = await postgresStore({ connectionString: server.url, journal: `latency-${latencies.length}` })
      const sample = await measureLatency(client, store, mode, sizes.latency)
      if (sample.adopted !== sizes.latency)
        throw new BenchError(`${mode}: ${sample.adopted} of ${sizes.latency} taken over`)
      latencies.push(sample)
    }
    return { cost: costTable(cost), latency: latencyTable(latencies) }
  } finally {
    await client.end()
  }
}

function costTable(samples: readonly { label: string; ms: number[] }[]): string {
  const base = quantile(samples[0]?.ms ?? [0], 0.5)
  return renderTable(
    [
      { header: 'in one transaction: BEGIN, INSERT app row, …, COMMIT', align: 'left' },
      { header: 'transactions', align: 'right' },
      { header: 'p50 ms', align: 'right' },
      { header: 'p99 ms', align: 'right' },
      { header: 'added to p50 ms', align: 'right' },
    ],
    samples.map((s) => {
      const p50 = quantile(s.ms, 0.5)
      return [s.label, String(s.ms.length), formatMs(p50), formatMs(quantile(s.ms, 0.99)), formatMs(p50 - base)]
    }),
  )
}

function latencyTable(samples: readonly LatencySample[]): string {
  return renderTable(
    [
      { header: 'commit to start', align: 'left' },
      { header: 'messages', align: 'right' },
      { header: 'p50 ms', align: 'right' },
      { header: 'p99 ms', align: 'right' },
      { header: 'max ms', align: 'right' },
    ],
    samples.map((s) => [
      s.mode,
      String(s.ms.length),
      formatMs(quantile(s.ms, 0.5)),
      formatMs(quantile(s.ms, 0.99)),
      formatMs(Math.max(...s.ms)),
    ]),
  )
}

function document(server: PgServer, sizes: Sizes, f: { cost: string; latency: string }, machine: string, s: number) {
  return `# Benchmark results — transactional enqueue on PostgreSQL

Generated by \`node benchmarks/dist/enqueue.js\` from the repository root, after \`npx tsc -b\` (or
\`pnpm --filter @flowing/benchmarks bench:enqueue\`): do not edit by hand. The other suites: [RESULTS.md](./RESULTS.md).
One run; figures drift run to run on 2 cores shared by the server and the client — compare within a table.

- **Code:** ${codeRevision()}
- **Machine:** ${machine}
- **Server:** ${server.description}
- **Date:** ${new Date().toISOString()} (whole run: ${s.toFixed(0)} s)

## What an enqueue adds to the application's transaction

Each transaction is \`BEGIN\`, an \`INSERT\` into the application's \`users\` table, the candidate's
write, \`COMMIT\` — on one connection of the application's own (\`pg.Client\`), timed from \`BEGIN\` to
\`COMMIT\`'s return. ${sizes.rounds} rounds of ${sizes.perRound} transactions per candidate, interleaved
(each round runs every candidate in turn), after a warm-up. With \`fsync=on\` the COMMIT's flush is most
of every transaction; **added to p50** is the difference with the baseline's median.

- **plain INSERT**: one row \`(id uuid, type text, body json)\` with the same payload: the least any
  outbox table costs.
- **Flowing enqueue()**: one statement (the row, with owner \`''\`, and \`pg_notify\` of the journal's
  channel); the first enqueue on a connection also reads the schema's version and journals once. No loop
  runs during this part: the rows stay in the journal.
- **with an idempotency key**: the same statement checks the finished keys and the unique index of keys
  in flight, then a second statement checks the finished keys again (read committed: a key finished
  while the insert waited is seen) — two round trips.
- **pg-boss 12 send()**: \`boss.send(queue, data, { db })\` with \`db.executeSql\` running on the same
  client, as pg-boss documents for sending in your transaction.

${f.cost}

## Commit to start

A loop of the journal (a \`postgresStore\` with its defaults: it LISTENs, renews every 5 s) runs the
messages an application's transactions enqueue, in the same process: each is timed from the return of
its transaction's \`COMMIT\` to its handler's start. **one at a time**: the next transaction waits for
the message to start (the latency alone); **back to back**: each transaction right after the previous
one's COMMIT (notifications arrive while a takeover runs: the next takeover takes what they announced).
Each message started exactly once (checked).

${f.latency}
`
}

runSuite('enqueue', USAGE, main)
