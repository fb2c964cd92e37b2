/**
 * The figures of the README: commit throughput (NORMAL and FULL), the time to open a 100k-row
 * journal, and a soak whose file sizes must stay bounded. Real files in the OS temp dir, removed after.
 *
 * ```text
 * npx tsx --conditions=@flowing/source packages/sqlite/bench/measure.ts [--smoke]
 * ```
 *
 * Each section checks its own result (the rows recovered, the sizes bounded) and exits 1 if one is off.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { JournalBatch, JournalRecord } from '@flowing/core'
import { type SynchronousMode, sqliteStore } from '../src/index.js'

const smoke = process.argv.includes('--smoke')
const dir = mkdtempSync(join(tmpdir(), 'flowing-sqlite-bench-'))
let files = 0
const newPath = () => join(dir, `journal-${files++}.db`)

/** A record the size of a typical one: a small JSON payload, one attempt. */
function record(id: string): JournalRecord {
  return {
    id,
    type: 'order.paid',
    payloadJson: `{"orderId":"${id}","amount":42.5,"currency":"EUR","customer":"c-1234"}`,
    key: 'c-1234',
    priority: 4,
    traceId: `t-${id}`,
    hops: 0,
    state: 'queued',
    attempts: [],
  }
}

function batch(parts: Partial<JournalBatch>): JournalBatch {
  return { messages: [], removed: [], deadLetters: [], deadLettersRemoved: [], keys: [], keysRemoved: [], ...parts }
}

const sizes = (path: string) => ({
  db: statSync(path).size,
  wal: statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0,
})
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(2)} MiB`
const rate = (n: number, ms: number) => `${Math.round((n / ms) * 1000).toLocaleString('en-US')}/s`

function check(ok: boolean, what: string): void {
  if (ok) return
  console.error(`FAILED: ${what}`)
  process.exitCode = 1
}

/** Puts then removes `batches × perBatch` records: every record journaled, then finished. */
function throughput(synchronous: SynchronousMode, perBatch: number, batches: number): void {
  const store = sqliteStore({ path: newPath(), synchronous })
  let n = 0
  const started = performance.now()
  for (let b = 0; b < batches; b++) {
    const ids = Array.from({ length: perBatch }, () => `m${n++}`)
    store.commit(batch({ messages: ids.map(record) }))
    store.commit(batch({ removed: ids }))
  }
  const ms = performance.now() - started
  const commits = batches * 2
  console.log(
    `| ${synchronous} | ${perBatch} | ${rate(n, ms)} | ${rate(n * 2, ms)} | ${rate(commits, ms)} | ${((ms / commits) * 1000).toFixed(0)} µs |`,
  )
  check(store.commits === commits, `${synchronous}: ${store.commits} commits, expected ${commits}`)
  store.close()
}

/** Opens a journal of `rows` rows (reading them all back) and an empty one. */
function openTime(rows: number): void {
  const path = newPath()
  const writer = sqliteStore({ path })
  for (let i = 0; i < rows; i += 10_000) {
    writer.commit(
      batch({ messages: Array.from({ length: Math.min(10_000, rows - i) }, (_, j) => record(`m${i + j}`)) }),
    )
  }
  writer.close()
  const times: number[] = []
  for (let run = 0; run < 5; run++) {
    const started = performance.now()
    const store = sqliteStore({ path })
    times.push(performance.now() - started)
    check(store.recovered().messages.length === rows, `recovered ${store.recovered().messages.length} of ${rows}`)
    store.close()
  }
  const emptyPath = newPath()
  sqliteStore({ path: emptyPath }).close()
  const started = performance.now()
  sqliteStore({ path: emptyPath }).close()
  const empty = performance.now() - started
  const median = [...times].sort((a, b) => a - b)[2] ?? 0
  console.log(
    `| ${rows.toLocaleString('en-US')} rows, ${mib(statSync(path).size)} | ${median.toFixed(1)} ms (median of 5) |`,
  )
  console.log(`| empty journal | ${empty.toFixed(2)} ms |`)
}

/**
 * A loop's life: a steady flow (each batch journals 200 records and finishes the 200 of the batch
 * before), and in the first quarter of every `cycle` batches nothing finishes, so a backlog of
 * `cycle / 4 × 200` records builds up, then drains 2000 per batch. Per cycle: the peak sizes, and the
 * sizes once drained — which must not grow from cycle to cycle.
 */
function soak(synchronous: SynchronousMode, batches: number, cycle: number): void {
  const path = newPath()
  const store = sqliteStore({ path, synchronous })
  let n = 0
  let previous: string[] = []
  const backlog: string[] = []
  let peak = { db: 0, wal: 0 }
  const drained: number[] = []
  console.log(
    '\n| cycle | backlog peak | peak database | peak -wal | database + -wal drained |\n| --- | --- | --- | --- | --- |',
  )
  const started = performance.now()
  let backlogPeak = 0
  for (let b = 1; b <= batches; b++) {
    const ids = Array.from({ length: 200 }, () => `m${n++}`)
    const growing = b % cycle > 0 && b % cycle <= cycle / 4
    if (growing) backlog.push(...previous)
    backlogPeak = Math.max(backlogPeak, backlog.length)
    const removed = growing ? [] : [...previous, ...backlog.splice(0, 2_000)]
    store.commit(batch({ messages: ids.map(record), removed }))
    previous = ids
    const now = sizes(path)
    peak = { db: Math.max(peak.db, now.db), wal: Math.max(peak.wal, now.wal) }
    if (b % cycle === 0) {
      drained.push(now.db + now.wal)
      console.log(
        `| ${b / cycle} | ${backlogPeak.toLocaleString('en-US')} | ${mib(peak.db)} | ${mib(peak.wal)} | ${mib(now.db + now.wal)} |`,
      )
      peak = { db: 0, wal: 0 }
      backlogPeak = 0
    }
  }
  const ms = performance.now() - started
  console.log(
    `\n${synchronous}: ${batches.toLocaleString('en-US')} batches, ${n.toLocaleString('en-US')} records journaled and finished in ${(ms / 1000).toFixed(1)} s`,
  )
  const first = drained[0] ?? 0
  check(
    drained.every((size) => size <= first + 8 * 1024 * 1024),
    `drained sizes grow: ${drained.map(mib).join(', ')}`,
  )
  store.close()
}

try {
  console.log('## Commit throughput (every record put in one batch, removed in the next)\n')
  console.log(
    '| synchronous | records per batch | records/s (put, then removed) | row writes/s | commits/s | per commit |\n| --- | --- | --- | --- | --- | --- |',
  )
  for (const mode of ['normal', 'full'] as const) {
    for (const [perBatch, batches] of smoke
      ? [[100, 20]]
      : [
          [100, 2_000],
          [1_000, 500],
          [10_000, 50],
        ]) {
      throughput(mode, perBatch as number, batches as number)
    }
  }
  console.log('\n## Open (schema check + reading every row)\n\n| journal | open |\n| --- | --- |')
  openTime(smoke ? 10_000 : 100_000)
  console.log('\n## Soak')
  soak('normal', smoke ? 400 : 20_000, smoke ? 100 : 2_000)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
