/**
 * The demo's failure section (seed 001's scenario): a downstream that succeeds 80 %, fails retryably
 * 15 % and for good 5 %, then goes down for 800 ms. Retries back off on the timing wheel (per-account
 * order kept), dead letters raise at most one alert per window, the breaker opens, holds the records
 * in the queue and recovers through probes; at the end the operator replays the dead letters.
 */
import { createLoop, type MessageTrace, NonRetryableError, RetryableError } from '@flowing/core'
import { mulberry32 } from '../lib/random.js'
import { type Column, renderTable } from '../lib/table.js'

interface Records {
  'record.sync': { account: string; n: number }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** How long the run lasts, and when the downstream is down (ms from the start). */
export interface FailureScenario {
  readonly durationMs: number
  readonly outage: readonly [from: number, to: number]
  readonly ratePerSecond: number
}

const DEFAULT: FailureScenario = { durationMs: 3_000, outage: [1_000, 1_800], ratePerSecond: 200 }

/** Runs the section and prints what happened. */
export async function runFailuresDemo(log: (line: string) => void, scenario = DEFAULT): Promise<void> {
  const random = mulberry32(7)
  const loop = createLoop<Records>({
    workers: 8,
    retry: { maxAttempts: 5, baseMs: 20, factor: 2, capMs: 400 },
    circuitBreaker: {
      consecutiveFailures: 8,
      failureRate: 0.6,
      minVolume: 30,
      windowMs: 1_000,
      cooldownMs: 250,
      probes: 2,
    },
    alerts: { windowMs: 1_000 },
    logger: { warn: (line) => log(`${at()}  log  ${line}`) },
    random,
  })
  const t0 = performance.now()
  const now = () => performance.now() - t0
  const at = () => `${(now() / 1000).toFixed(2)}s`.padStart(6)
  const down = () => now() >= scenario.outage[0] && now() < scenario.outage[1]

  // Per account: the order records were posted in, and the order they succeeded in.
  const posted = new Map<string, number[]>()
  const synced = new Map<string, number[]>()
  loop.on('record.sync', async (msg) => {
    await sleep(2 + random() * 6)
    if (down()) throw new RetryableError('connect ECONNREFUSED 10.0.0.7:5432')
    const roll = random()
    if (roll < 0.05) throw new NonRetryableError(`record ${msg.payload.n} has no account id`)
    if (roll < 0.2) throw new RetryableError(`upstream 503 after ${Math.round(roll * 1000)} ms`)
    const list = synced.get(msg.payload.account) ?? []
    list.push(msg.payload.n)
    synced.set(msg.payload.account, list)
  })
  loop.events.on('circuit', (c) =>
    log(`${at()}  breaker ${c.route}: ${c.previous} → ${c.state} (${c.reason}; ${c.held} held)`),
  )
  loop.events.on('alert', (a) =>
    log(
      `${at()}  ALERT ${a.type}: ${a.sinceLastAlert} dead letters since the last alert (${a.inWindow} in the last ${a.windowMs} ms) — ${a.topSignatures.map((s) => `${s.count}× ${s.signature}`).join('; ')}`,
    ),
  )
  const ticker = setInterval(() => {
    const { counters: c, gauges: g } = loop.metrics()
    const breaker = loop.circuits()[0]?.state ?? 'closed'
    log(
      `${at()}  ${down() ? 'OUTAGE' : 'up    '}  breaker ${breaker.padEnd(9)} queued ${String(g.queued).padStart(4)} (held ${String(g.held).padStart(3)})  backing off ${String(g.retrying).padStart(3)}  ok ${String(c.succeeded).padStart(4)}  retried ${String(c.retried).padStart(4)}  dead ${String(c.deadLettered).padStart(3)}  alerts ${c.alerts}`,
    )
  }, 250)

  // Producer: records for 40 accounts at a steady rate.
  let n = 0
  const perTick = Math.max(1, Math.round(scenario.ratePerSecond / 50))
  while (now() < scenario.durationMs) {
    for (let i = 0; i < perTick; i++) {
      const account = `acct-${Math.floor(random() * 40)}`
      const list = posted.get(account) ?? []
      list.push(++n)
      posted.set(account, list)
      loop.post('record.sync', { account, n }, { key: account })
    }
    await sleep(20)
  }
  await loop.drain()
  clearInterval(ticker)

  const letters = loop.deadLetters.list()
  const retried = letters.find((l) => l.attempts.length > 1) ?? letters[0]
  const trace = retried === undefined ? undefined : loop.trace(retried.id)
  const bySignature = new Map<string, number>()
  for (const l of letters) bySignature.set(l.error.signature, (bySignature.get(l.error.signature) ?? 0) + 1)

  const orderKept = [...synced].every(([account, done]) => {
    const order = posted.get(account) ?? []
    return done.every((value, i) => i === 0 || order.indexOf(value) > order.indexOf(done[i - 1] as number))
  })

  // The outage is over: the operator replays the letters that failed because of it.
  const outage = [...bySignature.keys()].find((s) => s.includes('ECONNREFUSED'))
  const replay = outage === undefined ? { replayed: [] } : loop.deadLetters.replay({ signature: outage })
  await loop.drain()
  await loop.stop()

  const c = loop.metrics().counters
  log('')
  log(
    renderTable(
      [
        { header: 'failure handling', align: 'left' },
        { header: 'value', align: 'right' },
      ],
      [
        ['records posted', n],
        ['succeeded (incl. replayed)', c.succeeded],
        ['failed attempts', c.failed],
        ['retries scheduled (back-off on the wheel)', c.retried],
        ['held by the open breaker (no attempt burnt)', c.held],
        ['dead-lettered', c.deadLettered],
        ['alerts (≤ 1 per second)', c.alerts],
        ['replayed by the operator', replay.replayed.length],
      ].map((r) => r.map(String)) as string[][],
    ),
  )
  log('')
  log(
    renderTable(
      [{ header: 'dead letters by signature', align: 'left' } as Column, { header: 'count', align: 'right' } as Column],
      [...bySignature].map(([s, count]) => [s, String(count)]),
    ),
  )
  log(
    `\naccepted ${c.accepted} = succeeded ${c.succeeded} + dead-lettered ${c.deadLettered} + dropped ${c.dropped} + cancelled ${c.cancelled} + snapshotted ${c.snapshotted}  ${c.accepted === c.succeeded + c.deadLettered + c.dropped + c.cancelled + c.snapshotted ? '✔' : '✘'}`,
  )
  log(`per-account order of successful syncs = post order  ${orderKept ? '✔' : '✘'}`)
  if (trace !== undefined) log(`\nTrace of ${trace.id} (${trace.attempts.length} attempts):\n${describeTrace(trace)}`)
}

function describeTrace(t: MessageTrace): string {
  const start = t.transitions[0]?.at ?? 0
  return t.transitions
    .map((s) => {
      const attempt = s.attempt === undefined ? '' : ` #${s.attempt}`
      const detail = s.detail === undefined ? '' : `  ${s.detail}`
      return `  +${(s.at - start).toFixed(0).padStart(5)} ms  ${s.state}${attempt}${detail}`
    })
    .join('\n')
}
