/**
 * `node dist/threads.js [--smoke]`: `@flowing/threads` against in-loop handlers and plain piscina —
 * CPU-bound throughput, the event loop's delay meanwhile, I/O messages next to CPU ones, and what a
 * payload costs to cross. Fails (exit 1) when a count or a result does not add up — never on speed.
 */

import { writeFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { ThreadPool } from '@flowing/threads'
import { Piscina } from 'piscina'
import { codeRevision, describeMachine, formatMachine, producingCommand } from './lib/machine.js'
import { runSuite } from './lib/run-suite.js'
import { formatCount, formatMs, formatRatio, median } from './lib/stats.js'
import { renderTable } from './lib/table.js'
import type { LoopDelay } from './threads/probe.js'
import {
  type CpuSample,
  type CpuSubject,
  calibrate,
  loopWorkers,
  type MixedCpu,
  type MixedSample,
  type MixedShape,
  objectPayload,
  type PayloadCase,
  runCpu,
  runHop,
  runMixed,
  runPayload,
  TASK_MODULE,
  threadsOf,
} from './threads/runs.js'

const RESULTS = new URL('../RESULTS-threads.md', import.meta.url)
const USAGE = 'usage: node dist/threads.js [--smoke]'
const CPU_MS = 5

const threads = (t: number): string => `${t} thread${t === 1 ? '' : 's'}`

interface Row<S> {
  readonly id: string
  readonly label: string
  readonly make: () => S
}

async function main(args: string[]): Promise<void> {
  const smoke = args.includes('--smoke')
  const machine = describeMachine()
  const cores = availableParallelism()
  const counts = [...new Set([cores, Math.max(1, cores - 1)])]
  const n = smoke ? 20 : 400
  const rounds = smoke ? 1 : 5
  const { rounds: hashRounds, ms: calibratedMs } = calibrate(CPU_MS)
  console.log(
    `Threads — ${formatCount(n)} CPU-bound messages of ${formatMs(calibratedMs)} ms (${hashRounds} SHA-256 rounds), ${cores} cores\n`,
  )

  const pools = new Map(counts.map((t) => [t, new ThreadPool({ maxThreads: t, minThreads: t })]))
  const piscinas = new Map(
    counts.map((t) => [t, new Piscina({ filename: TASK_MODULE.href, minThreads: t, maxThreads: t })]),
  )
  const cpuRows: Row<CpuSubject>[] = [
    { id: 'in-loop', label: 'in-loop handler', make: () => ({ kind: 'in-loop' }) },
    ...counts.flatMap((t): Row<CpuSubject>[] => {
      const piscina = piscinas.get(t) as Piscina
      return [
        {
          id: `threaded-${t}`,
          label: `threaded(), ${threads(t)}`,
          make: () => ({ kind: 'threaded', pool: pools.get(t) as ThreadPool }),
        },
        {
          id: `loop-piscina-${t}`,
          label: `loop → piscina.run, ${threads(t)}`,
          make: () => ({ kind: 'loop-piscina', piscina, threads: t }),
        },
        {
          id: `piscina-${t}`,
          label: `plain piscina, ${threads(t)}`,
          make: () => ({ kind: 'piscina', piscina, threads: t }),
        },
      ]
    }),
  ]
  // Warm-up (not counted): every subject once on a few messages — threads started, module loaded, JIT.
  for (const row of cpuRows) await runCpu(row.make(), 2 * cores, hashRounds, `warm-up ${row.label}`)
  const cpu = await interleave(cpuRows, rounds, (row, r) =>
    runCpu(row.make(), n, hashRounds, `${row.label}, round ${r}`),
  )

  // The hop's fixed cost, apart from the work: empty tasks on the one-thread pools, 1 and 4 in flight.
  const one = Math.min(...counts)
  const hopRows: Row<CpuSubject>[] = cpuRows.filter((r) => r.id.endsWith(`-${one}`))
  const hopN = smoke ? 50 : 2_000
  for (const row of hopRows) await runHop(row.make(), Math.ceil(hopN / 4), 1)
  const hop = await interleave(hopRows, rounds, async (row) => [
    await runHop(row.make(), hopN, 1),
    await runHop(row.make(), hopN, 4),
  ])

  const shape: MixedShape = {
    cpu: n,
    rounds: hashRounds,
    io: smoke ? 20 : 500,
    ioEveryMs: 2,
    ioWaitMs: 2,
    cpuSlots: loopWorkers(cores),
  }
  const mixedRows: Row<MixedCpu>[] = [
    { id: 'io-alone', label: 'I/O alone (no CPU messages)', make: () => ({ kind: 'none' }) },
    { id: 'in-loop', label: 'I/O + in-loop CPU handlers', make: () => ({ kind: 'in-loop' }) },
    ...counts.flatMap((t): Row<MixedCpu>[] => [
      {
        id: `threaded-${t}`,
        label: `I/O + threaded CPU, ${threads(t)}`,
        make: () => ({ kind: 'threaded', pool: pools.get(t) as ThreadPool }),
      },
      {
        id: `loop-piscina-${t}`,
        label: `I/O + loop → piscina.run, ${threads(t)}`,
        make: () => ({ kind: 'loop-piscina', piscina: piscinas.get(t) as Piscina }),
      },
    ]),
  ]
  const mixed = await interleave(mixedRows, rounds, (row, r) =>
    runMixed(row.make(), shape, `mixed, ${row.label}, round ${r}`),
  )

  const payloadPool = pools.get(Math.min(...counts)) as ThreadPool
  const payloadRows = payloadCases()
  const reps = smoke ? 2 : 30
  const payloadMs = new Map<string, number>()
  for (const c of payloadRows) payloadMs.set(c.label, await runPayload(payloadPool, c, reps))

  for (const pool of pools.values()) await pool.close()
  for (const piscina of piscinas.values()) await piscina.destroy()

  const cpuTable = renderCpu(cpuRows, cpu, counts)
  const roundsTable = renderRounds(cpuRows, cpu, rounds)
  const mixedTable = renderMixed(mixedRows, mixed)
  const payloadTable = renderPayload(payloadRows, payloadMs)
  const hopTable = renderHop(hopRows, hop, one)
  const targets = renderTargets(cpu, mixed, counts, hopOverhead(hop, one, calibratedMs))
  console.log(cpuTable)
  console.log(`\nEvery round:\n\n${roundsTable}`)
  console.log(`\nThe hop alone (${formatCount(hopN)} empty tasks, µs per task):\n\n${hopTable}`)
  console.log(
    `\nMixed: ${formatCount(shape.io)} I/O messages (a ${shape.ioWaitMs} ms setTimeout each, one arriving every ${shape.ioEveryMs} ms) next to ${formatCount(shape.cpu)} CPU messages:\n\n${mixedTable}`,
  )
  console.log(`\nPayload: one threaded request at a time, median of ${reps}:\n\n${payloadTable}`)
  console.log(`\nTargets:\n\n${targets}`)
  if (smoke || args.length > 0) return
  writeFileSync(
    RESULTS,
    [
      '# Benchmark results — threads',
      '',
      `Generated by ${producingCommand(args, 'threads')}. \`@flowing/threads\` (\`threaded()\` on a \`ThreadPool\`) against`,
      'the same handler in the loop and against plain piscina running the same function. The other suites: [RESULTS.md](./RESULTS.md).',
      '',
      `- **Code:** ${codeRevision()}`,
      `- **Machine:** ${formatMachine(machine)}`,
      `- **Date:** ${new Date().toISOString()}`,
      `- **Workload:** ${formatCount(n)} CPU-bound messages per run, each ${hashRounds} chained SHA-256 digests (calibrated at start to ${formatMs(calibratedMs)} ms on the main thread, the fastest of 7 tries; the in-loop row's ms / msg shows what a message took under the run's load), all posted at once; median of ${rounds} rounds, interleaved across rows, after a warm-up of every row.`,
      '',
      '## Reading',
      '',
      '<!-- READING -->',
      '',
      '## CPU-bound throughput and event-loop delay',
      '',
      cpuTable,
      '',
      `- **msgs/s**: N ÷ (first post → last result). The loop rows use \`loop.request()\` per message, ${loopWorkers(cores)} loop workers for ${cores} threads (2 per thread) and the same for in-loop; plain piscina is \`Promise.all\` of \`piscina.run(job)\`.`,
      '- **ms / msg / thread**: threads × 1000 ÷ msgs/s — the time one message holds a thread (the in-loop row: the main thread).',
      "- **× in-loop**: this row ÷ the in-loop row. **piscina ÷ this**: plain piscina's msgs/s with as many threads ÷ this row's — the overhead per task (1.00× = none).",
      '- **loop → piscina.run**: the loop with plain `piscina.run(payload)` as the handler (same piscina as the plain row): what the loop alone adds, apart from `@flowing/threads` (its `ThreadPool`, thread entry, notes channel and abort signal).',
      '- **ELD**: `monitorEventLoopDelay({ resolution: 1 })` during the run, ms (the figure includes the 1 ms resolution). **timer late**: lateness of a 10 ms `setInterval` (gap − 10 ms), p99 and max. A loop blocked for the whole run shows its block as the max.',
      '',
      '## The hop alone: the fixed cost per task',
      '',
      `${formatCount(hopN)} empty tasks (the same function with no hashing) on ${threads(one)}, one or four in flight, µs per task (median of ${rounds} interleaved rounds). What any task pays on top of its work, without the machine's noise in the CPU rows above; **5 ms task** is the ratio it gives a task of the calibrated ${formatMs(calibratedMs)} ms against plain piscina.`,
      '',
      hopTable,
      '',
      '## Mixed workload: I/O messages next to CPU-bound ones',
      '',
      `${formatCount(shape.io)} I/O messages, each awaiting a ${shape.ioWaitMs} ms \`setTimeout\`, arriving one every ${shape.ioEveryMs} ms, next to ${formatCount(shape.cpu)} CPU messages posted at once (key group \`cpu\`, ${shape.cpuSlots} at a time; the loop has 64 more workers for I/O). Latency from each I/O message's scheduled arrival to its handler's end (so it includes the ${shape.ioWaitMs} ms wait and any lateness in posting it).`,
      '',
      mixedTable,
      '',
      '## Payload cost',
      '',
      `One \`loop.request()\` at a time through a threaded handler on a one-thread pool (\`export: 'measure'\`, which answers the bytes or rows received), median of ${reps} after 3 warm-up requests. **over empty**: the time above the empty payload's; **µs / KB**: that divided by the size.`,
      '',
      payloadTable,
      '',
      '## Targets',
      '',
      targets,
      '',
      "Self-checks that passed: every CPU message answered exactly once with the right digest, every I/O message handled, the loops' `succeeded` counters, every payload received whole and every transferred buffer detached in the sender.",
      '',
    ].join('\n'),
  )
  console.log(`\nWrote ${RESULTS.pathname}`)
}

/** Runs round 1 of every row, then round 2 …, so drift in the machine hits all rows alike. */
async function interleave<S, T>(
  rows: readonly Row<S>[],
  rounds: number,
  run: (row: Row<S>, round: number) => Promise<T>,
): Promise<Map<string, T[]>> {
  const samples = new Map<string, T[]>(rows.map((r) => [r.id, []]))
  for (let round = 1; round <= rounds; round++) {
    for (const row of rows) samples.get(row.id)?.push(await run(row, round))
  }
  return samples
}

function medianDelay(samples: readonly { readonly delay: LoopDelay }[]): LoopDelay {
  const of = (pick: (d: LoopDelay) => number): number => median(samples.map((s) => pick(s.delay)))
  return {
    p50: of((d) => d.p50),
    p99: of((d) => d.p99),
    max: of((d) => d.max),
    timerP99: of((d) => d.timerP99),
    timerMax: of((d) => d.timerMax),
    ticks: of((d) => d.ticks),
  }
}

function rate(samples: Map<string, CpuSample[]>, id: string): number {
  return median((samples.get(id) ?? []).map((s) => s.msgsPerSecond))
}

function renderCpu(rows: readonly Row<CpuSubject>[], cpu: Map<string, CpuSample[]>, counts: readonly number[]): string {
  const base = rate(cpu, 'in-loop')
  return renderTable(
    [
      { header: 'row', align: 'left' },
      { header: 'msgs/s', align: 'right' },
      { header: 'ms / msg / thread', align: 'right' },
      { header: '× in-loop', align: 'right' },
      { header: 'piscina ÷ this', align: 'right' },
      { header: 'ELD p50 / p99 / max ms', align: 'right' },
      { header: 'timer late p99 / max ms', align: 'right' },
    ],
    rows.map((row) => {
      const r = rate(cpu, row.id)
      const d = medianDelay(cpu.get(row.id) ?? [])
      const t = counts.find((c) => row.id === `threaded-${c}` || row.id === `loop-piscina-${c}`)
      return [
        row.label,
        r.toFixed(0),
        ((threadsOf(row.make()) * 1000) / r).toFixed(2),
        formatRatio(r / base),
        t === undefined ? '—' : formatRatio(rate(cpu, `piscina-${t}`) / r),
        `${formatMs(d.p50)} / ${formatMs(d.p99)} / ${formatMs(d.max)}`,
        `${formatMs(d.timerP99)} / ${formatMs(d.timerMax)}`,
      ]
    }),
  )
}

function renderRounds(rows: readonly Row<CpuSubject>[], cpu: Map<string, CpuSample[]>, rounds: number): string {
  return renderTable(
    [
      { header: 'row', align: 'left' },
      ...Array.from({ length: rounds }, (_, i) => ({ header: `round ${i + 1} msgs/s`, align: 'right' as const })),
    ],
    rows.map((row) => [row.label, ...(cpu.get(row.id) ?? []).map((s) => s.msgsPerSecond.toFixed(0))]),
  )
}

function renderMixed(rows: readonly Row<MixedCpu>[], mixed: Map<string, MixedSample[]>): string {
  return renderTable(
    [
      { header: 'row', align: 'left' },
      { header: 'I/O latency p50 ms', align: 'right' },
      { header: 'p99 ms', align: 'right' },
      { header: 'max ms', align: 'right' },
      { header: 'ELD p99 / max ms', align: 'right' },
      { header: 'timer late p99 ms', align: 'right' },
    ],
    rows.map((row) => {
      const s = mixed.get(row.id) ?? []
      const of = (pick: (x: MixedSample) => number): string => formatMs(median(s.map(pick)))
      const d = medianDelay(s)
      return [
        row.label,
        of((x) => x.io.p50),
        of((x) => x.io.p99),
        of((x) => x.io.max),
        `${formatMs(d.p99)} / ${formatMs(d.max)}`,
        formatMs(d.timerP99),
      ]
    }),
  )
}

const KB = 1024

function payloadCases(): PayloadCase[] {
  const bytes = (kb: number, transfer: boolean): PayloadCase => ({
    label: `Uint8Array ${kb >= KB ? `${kb / KB} MB` : `${kb} KB`}, ${transfer ? 'transferred' : 'copied'}`,
    kb,
    transfer,
    make: () => new Uint8Array(kb * KB).fill(7),
    expect: kb * KB,
  })
  const object = (kb: number): PayloadCase => {
    const sample = objectPayload(kb * KB)
    return {
      label: `object ${kb >= KB ? `${kb / KB} MB` : `${kb} KB`} (JSON), copied`,
      kb: JSON.stringify(sample).length / KB,
      transfer: false,
      make: () => sample,
      expect: sample.rows.length,
    }
  }
  return [
    { label: 'empty (the hop alone)', kb: 0, transfer: false, make: () => new Uint8Array(0), expect: 0 },
    ...[1, 64, KB].map((kb) => object(kb)),
    ...[1, 64, KB].map((kb) => bytes(kb, false)),
    bytes(KB, true),
  ]
}

function renderPayload(rows: readonly PayloadCase[], ms: Map<string, number>): string {
  const hop = ms.get(rows[0]?.label ?? '') ?? Number.NaN
  return renderTable(
    [
      { header: 'payload', align: 'left' },
      { header: 'KB', align: 'right' },
      { header: 'ms / message', align: 'right' },
      { header: 'over empty ms', align: 'right' },
      { header: 'µs / KB', align: 'right' },
    ],
    rows.map((c) => {
      const t = ms.get(c.label) ?? Number.NaN
      return [
        c.label,
        c.kb.toFixed(c.kb < 10 ? 1 : 0),
        formatMs(t),
        c.kb === 0 ? '—' : t > hop ? formatMs(t - hop) : '≈ 0',
        c.kb === 0 ? '—' : t > hop ? (((t - hop) * 1000) / c.kb).toFixed(2) : '≈ 0',
      ]
    }),
  )
}

const hopUs = (hop: Map<string, number[][]>, id: string, at: 0 | 1): number =>
  median((hop.get(id) ?? []).map((pair) => pair[at] as number))

function renderHop(rows: readonly Row<CpuSubject>[], hop: Map<string, number[][]>, t: number): string {
  return renderTable(
    [
      { header: 'row', align: 'left' },
      { header: '1 in flight µs', align: 'right' },
      { header: '4 in flight µs', align: 'right' },
      { header: 'over piscina, 1 / 4 µs', align: 'right' },
    ],
    rows.map((row) => {
      const over = (at: 0 | 1): string =>
        row.id === `piscina-${t}` ? '—' : (hopUs(hop, row.id, at) - hopUs(hop, `piscina-${t}`, at)).toFixed(0)
      return [row.label, hopUs(hop, row.id, 0).toFixed(0), hopUs(hop, row.id, 1).toFixed(0), `${over(0)} / ${over(1)}`]
    }),
  )
}

/** threaded ÷ plain piscina for a task of `workMs`, from the hop one in flight (the worst case). */
function hopOverhead(hop: Map<string, number[][]>, t: number, workMs: number): number {
  const work = workMs * 1000
  return (work + hopUs(hop, `threaded-${t}`, 0)) / (work + hopUs(hop, `piscina-${t}`, 0))
}

function renderTargets(
  cpu: Map<string, CpuSample[]>,
  mixed: Map<string, MixedSample[]>,
  counts: readonly number[],
  overheadFromHop: number,
): string {
  const top = Math.max(...counts)
  const speedup = rate(cpu, `threaded-${top}`) / rate(cpu, 'in-loop')
  const ioP99 = (id: string): number => median((mixed.get(id) ?? []).map((s) => s.io.p99))
  const verdict = (met: boolean): string => (met ? 'met' : 'NOT met')
  const rows: string[][] = [[`threads (${top}) ≥ 1.6× in-loop msgs/s`, formatRatio(speedup), verdict(speedup >= 1.6)]]
  for (const t of counts) {
    const overhead = rate(cpu, `piscina-${t}`) / rate(cpu, `threaded-${t}`)
    rows.push([
      `overhead ≤ 1.2× plain piscina per task (${threads(t)}, throughput)`,
      formatRatio(overhead),
      verdict(overhead <= 1.2),
    ])
  }
  rows.push([
    'overhead ≤ 1.2× plain piscina per task (the hop on a 5 ms task, 1 in flight)',
    formatRatio(overheadFromHop),
    verdict(overheadFromHop <= 1.2),
  ])
  for (const t of counts) {
    const p99 = medianDelay(cpu.get(`threaded-${t}`) ?? []).p99
    rows.push([`event-loop delay p99 ≤ 10 ms with threads (${t})`, `${formatMs(p99)} ms`, verdict(p99 <= 10)])
  }
  const alone = ioP99('io-alone')
  for (const t of counts) {
    const p99 = ioP99(`threaded-${t}`)
    rows.push([
      `mixed I/O p99 unaffected by threaded CPU (${t}): within 2 ms of I/O alone (${formatMs(alone)} ms)`,
      `${formatMs(p99)} ms`,
      verdict(p99 <= alone + 2),
    ])
    const floor = ioP99(`loop-piscina-${t}`)
    rows.push([
      `… and within 1 ms of the same CPU on plain piscina (${t}: ${formatMs(floor)} ms)`,
      `${formatMs(p99)} ms`,
      verdict(p99 <= floor + 1),
    ])
  }
  return renderTable(
    [
      { header: 'target', align: 'left' },
      { header: 'measured', align: 'right' },
      { header: 'verdict', align: 'left' },
    ],
    rows,
  )
}

runSuite('threads', USAGE, main)
