/**
 * `node dist/durable.js [--smoke]`: what a journal costs — one workload side by side on the in-memory
 * loop, `MemoryStore`, SQLite (`synchronous: 'normal'` and `'full'`), PostgreSQL (a private server) and
 * BullMQ on a private Redis, the job queue users would pick instead: messages per second end to end,
 * the ratio to in-memory, the latency of the durable acknowledgement (`flushed()`) per burst and one
 * post at a time, the journal's size and its commits per second, the targets beside them; then
 * a compaction soak on SQLite NORMAL. Fails (exit 1) when a count does not add up — never on speed.
 */
import { writeFileSync } from 'node:fs'
import { bullmqBatched, bullmqSingles } from './durable/bullmq-run.js'
import { type BatchedSample, batchedRun, type SinglesSample, singlesRun } from './durable/flowing-run.js'
import { inMemory, type JournalKind, memoryStore, sqliteJournal, type Target } from './durable/journals.js'
import { postgresJournal } from './durable/pg-journal.js'
import { mainTable, microtaskTable, type RowResult, soakSummary, soakTable } from './durable/report.js'
import { durableDocument } from './durable/results.js'
import { type Server, startPostgres, startRedis } from './durable/servers.js'
import { runSoak, soakOptions } from './durable/soak.js'
import { type DurableWorkload, durableWorkload, type HandlerMode } from './durable/workload.js'
import { BenchError } from './lib/check.js'
import { UsageError } from './lib/cli.js'
import { codeRevision, describeMachine, formatMachine } from './lib/machine.js'
import { runSuite } from './lib/run-suite.js'

const RESULTS = new URL('../RESULTS-durable.md', import.meta.url)
const USAGE = 'usage: node dist/durable.js [--smoke]'
/** A row whose first round takes longer than this runs only once. */
const SLOW_ROUND_S = 20

interface Row {
  readonly id: string
  readonly label: string
  readonly target?: Target
  /** Why the row cannot run on this machine, if it cannot. */
  readonly missing?: string
  /** Whether the row runs in the `microtask` handler mode too (Flowing rows only). */
  readonly flowing: boolean
  batched(w: DurableWorkload): Promise<BatchedSample>
  singles(w: DurableWorkload): Promise<SinglesSample>
}

function flowingRow(kind: JournalKind): Row {
  return {
    id: kind.id,
    label: kind.label,
    ...(kind.target === undefined ? {} : { target: kind.target }),
    flowing: true,
    batched: (w) => batchedRun(kind, w),
    singles: (w) => singlesRun(kind, w),
  }
}

function missingRow(id: string, label: string, missing: string, target?: Target): Row {
  const none = () => Promise.reject(new BenchError(`${label} is missing: ${missing}`))
  return { id, label, missing, flowing: id !== 'bullmq', ...(target ? { target } : {}), batched: none, singles: none }
}

function bullmqRow(redis: Server): Row {
  return {
    id: 'bullmq',
    label: 'BullMQ 5 on Redis (job queue)',
    flowing: false,
    batched: (w) => bullmqBatched(redis, w),
    singles: (w) => bullmqSingles(redis, w),
  }
}

/** Batched rounds, interleaved across rows; a slow row runs once. */
async function batchedRounds(rows: readonly Row[], w: DurableWorkload, rounds: number): Promise<RowResult[]> {
  const samples = new Map<string, BatchedSample[]>(rows.map((r) => [r.id, []]))
  for (let round = 0; round < rounds; round++) {
    for (const row of rows) {
      const mine = samples.get(row.id) ?? []
      if (row.missing !== undefined || (round > 0 && (mine[0]?.seconds ?? 0) > SLOW_ROUND_S)) continue
      process.stdout.write(`  ${w.handler} round ${round + 1}/${rounds}: ${row.label} … `)
      const sample = await row.batched(w)
      process.stdout.write(`${Math.round(sample.msgsPerSec)} msgs/s\n`)
      mine.push(sample)
    }
  }
  return rows.map((r) => ({
    id: r.id,
    label: r.label,
    ...(r.target === undefined ? {} : { target: r.target }),
    ...(r.missing === undefined ? {} : { missing: r.missing }),
    batched: samples.get(r.id) ?? [],
  }))
}

/** Every row in both handler modes (the job queue in `turn` only), then one-at-a-time. */
async function measure(rows: readonly Row[], w: DurableWorkload, rounds: number) {
  const warm = { ...w, n: Math.min(w.n, 20_000) }
  for (const handler of ['turn', 'microtask'] as const satisfies readonly HandlerMode[]) {
    for (const row of rows.filter((r) => r.flowing && r.missing === undefined).slice(0, 3)) {
      await row.batched({ ...warm, handler })
    }
  }
  const turn = await batchedRounds(rows, { ...w, handler: 'turn' }, rounds)
  const microtask = await batchedRounds(
    rows.filter((r) => r.flowing),
    { ...w, handler: 'microtask' },
    rounds,
  )
  const main: RowResult[] = []
  for (const [i, row] of rows.entries()) {
    const result = turn[i] as RowResult
    if (row.missing !== undefined) {
      main.push(result)
      continue
    }
    process.stdout.write(`  one at a time: ${row.label} … `)
    const singles = await row.singles({ ...w, handler: 'turn' })
    process.stdout.write(`${Math.round(singles.acksPerSec)} acks/s\n`)
    main.push({ ...result, singles })
  }
  return { main, microtask }
}

async function main(args: string[]): Promise<void> {
  const unknown = args.filter((a) => a !== '--smoke')
  if (unknown.length > 0) throw new UsageError(`Unknown argument \`${unknown[0]}\``)
  const smoke = args.includes('--smoke')
  const w = durableWorkload(smoke)
  const rounds = smoke ? 1 : 3
  const started = performance.now()
  const [redis, postgres] = [await startRedis(), await startPostgres()]
  const pg = postgres.ok ? postgresJournal(postgres.server) : undefined
  try {
    const sqlite = [sqliteJournal('normal'), sqliteJournal('normal', true), sqliteJournal('full')]
    const rows: Row[] = [inMemory, memoryStore, ...sqlite].map(flowingRow)
    rows.push(
      pg === undefined ? missingRow('postgres', 'PostgreSQL', postgres.ok ? '' : postgres.reason) : flowingRow(pg),
    )
    rows.push(redis.ok ? bullmqRow(redis.server) : missingRow('bullmq', 'BullMQ on Redis', redis.reason))
    console.log(
      `Durable journals — ${w.n.toLocaleString('en-US')} messages, bursts of ${w.burst}, ${w.workers} workers\n`,
    )
    const { main: mainRows, microtask } = await measure(rows, w, rounds)
    const soakO = soakOptions(smoke)
    console.log(`  soak: SQLite NORMAL for ${soakO.durationMs / 1000} s …`)
    const soak = await runSoak(soakO)
    const tables = { main: mainTable(mainRows), microtask: microtaskTable(microtask), soak: soakTable(soak) }
    console.log(
      `\n${tables.main}\n\nPlain no-op async handler (a burst finishes within its turn):\n\n${tables.microtask}`,
    )
    console.log(`\nCompaction soak:\n\n${tables.soak}\n\n${soakSummary(soak)}`)
    if (!smoke) {
      const servers = [redis, postgres].map((s) => (s.ok ? s.server.description : `missing: ${s.reason}`))
      const doc = durableDocument({
        revision: codeRevision(),
        machine: formatMachine(describeMachine()),
        seconds: (performance.now() - started) / 1000,
        workload: w,
        rounds,
        servers,
        tables,
        soak,
      })
      writeFileSync(RESULTS, doc)
      console.log(`\nWrote ${RESULTS.pathname}`)
    }
  } finally {
    await pg?.end()
    if (postgres.ok) await postgres.server.stop()
    if (redis.ok) await redis.server.stop()
  }
}

runSuite('durable', USAGE, main)
