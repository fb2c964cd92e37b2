/**
 * What the exporter costs per message: the same loop, the same 300k no-op messages posted 1,000 per
 * event-loop turn, without and with `prometheus(loop)`, alternated over several rounds; prints the
 * median ns per message of each and the difference.
 *
 * ```text
 * npx tsx --conditions=@flowing/source packages/prometheus/bench/overhead.ts [messages] [rounds]
 * ```
 */
import { createLoop } from '@flowing/core'
import { Registry } from 'prom-client'
import { prometheus } from '../src/index.js'

const messages = Number(process.argv[2] ?? 300_000)
const rounds = Number(process.argv[3] ?? 5)
const BATCH = 1_000
const TYPES = ['order.paid', 'order.shipped', 'email.sent', 'invoice.due'] as const

type Messages = Record<(typeof TYPES)[number], number>

async function run(exported: boolean): Promise<number> {
  const loop = createLoop<Messages>({ workers: 8, capacity: 10_000, logger: false })
  let done = 0
  for (const type of TYPES) loop.on(type, () => void done++)
  const registry = new Registry()
  const exporter = exported ? prometheus(loop, { registry }) : undefined
  const start = process.hrtime.bigint()
  for (let posted = 0; posted < messages; ) {
    for (let i = 0; i < BATCH && posted < messages; i++, posted++)
      loop.post(TYPES[posted & 3] as (typeof TYPES)[number], posted)
    await new Promise((resolve) => setImmediate(resolve))
  }
  await loop.drain()
  const ns = Number(process.hrtime.bigint() - start) / messages
  if (done !== messages) throw new Error(`processed ${done} of ${messages}`)
  if (exporter !== undefined) {
    const text = await registry.metrics()
    const processed = [...text.matchAll(/^flowing_processed_total\{[^}]*\} (\d+)$/gm)].reduce(
      (s, m) => s + Number(m[1]),
      0,
    )
    if (processed !== messages) throw new Error(`exported ${processed} of ${messages}`)
    exporter.unregister()
  }
  await loop.stop()
  return ns
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number
const plain: number[] = []
const withExporter: number[] = []
await run(false) // warm-up
await run(true)
for (let r = 0; r < rounds; r++) {
  plain.push(await run(false))
  withExporter.push(await run(true))
}
const a = median(plain)
const b = median(withExporter)
console.log(`messages ${messages}, rounds ${rounds}, Node ${process.version}`)
console.log(`without exporter  ${a.toFixed(0)} ns/msg`)
console.log(`with exporter     ${b.toFixed(0)} ns/msg`)
console.log(`exporter cost     ${(b - a).toFixed(0)} ns/msg (${((b / a - 1) * 100).toFixed(0)} %)`)
