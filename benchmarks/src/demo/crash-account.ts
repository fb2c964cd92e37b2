/**
 * The crash scene's bookkeeping: what the killed process acknowledged, what its journal held after the
 * kill, and the effects both processes appended — turned into the account the demo prints (and its
 * test checks): nothing acknowledged lost, nothing whose completion was committed run again, the
 * repeats counted, per-key order kept, no reminder early.
 *
 * @module
 */
import type { JournalState } from '@flowing/core'

/** The scene's messages. */
export interface CrashMessages {
  'payment.capture': { seq: number; account: string }
  'reminder.send': { seq: number; dueAt: number }
}

/** What a child tells the parent over IPC. */
export type ChildReport =
  | { readonly type: 'posted'; readonly to: number }
  | { readonly type: 'acked'; readonly to: number }
  | { readonly type: 'finished'; readonly succeeded: number }

/** Payments go to this many accounts, the key: one account's payments run one at a time, in order. */
export const ACCOUNTS = 40
/** Posts per burst; each burst is acknowledged by `flushed()` before the next. */
export const BURST = 40
/** Every `REMINDER_EVERY`-th post is a reminder, delayed by {@link REMINDER_DELAY_MS}. */
export const REMINDER_EVERY = 8
/** How long a reminder waits. */
export const REMINDER_DELAY_MS = 400

/** Whether post `seq` is a reminder (else a payment). */
export const isReminder = (seq: number): boolean => seq % REMINDER_EVERY === REMINDER_EVERY - 1
/** One payment in 21 fails its first attempt (a transient error) and backs off (21 and 40 share no factor). */
export const isFlaky = (seq: number): boolean => seq % 21 === 3
/** The idempotency key of post `seq`: `pay-12`, `remind-15`. */
export const idempotencyKey = (seq: number): string => (isReminder(seq) ? `remind-${seq}` : `pay-${seq}`)

/** One line of the effects file: `pay-12 acct-12 <pid>` or `remind-15 on-time <pid>`. */
export interface Effect {
  readonly key: string
  readonly seq: number
  /** The account of a payment, `on-time` / `EARLY` for a reminder. */
  readonly detail: string
  readonly pid: number
}

/** Parses the effects file. */
export function parseEffects(text: string): Effect[] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const [key = '', detail = '', pid = '0'] = line.split(' ')
      return { key, seq: Number(key.slice(key.indexOf('-') + 1)), detail, pid: Number(pid) }
    })
}

/** What the scene observed. */
export interface CrashObservation {
  /** Posts the killed process reported posted, and acknowledged (seqs below each). */
  readonly posted: number
  readonly acked: number
  /** The journal after the kill: idempotency key → state of each message it held. */
  readonly recovered: ReadonlyMap<string, JournalState>
  /** Idempotency keys of the recovered payments whose charge was committed (`ctx.commit()`) before the kill. */
  readonly charged: ReadonlySet<string>
  /** Effects appended by the killed process, and by the one that finished. */
  readonly before: readonly Effect[]
  readonly after: readonly Effect[]
}

/** The account. */
export interface CrashAccount {
  readonly posted: number
  readonly acked: number
  readonly recovered: { readonly queued: number; readonly delayed: number; readonly backingOff: number }
  /** Recovered payments already charged, their charge committed: resumed after it, not charged again. */
  readonly resumedAfterCharge: number
  /** Distinct posts with an effect at the end, and before the kill. */
  readonly completed: number
  readonly completedBefore: number
  /** Acknowledged posts without an effect: must be 0. */
  readonly lostAcknowledged: number
  /** Posted after the last acknowledgement: committed anyway (ran), or lost (never acknowledged). */
  readonly unacknowledgedRan: number
  readonly unacknowledgedLost: number
  /** Posts with exactly one effect, with two, with more. */
  readonly once: number
  readonly twice: number
  readonly more: number
  /** Twice-run posts that were in the journal after the kill: their completion was not committed. */
  readonly twiceUncommitted: number
  /** Posts whose effect happened and whose completion was committed, that ran again: must be 0. */
  readonly committedRanAgain: number
  /** Accounts whose payments took effect out of post order in one process: must be 0. */
  readonly outOfOrder: number
  /** Reminders that ran before their due time: must be 0. */
  readonly early: number
}

function countBy<T>(items: readonly T[], key: (t: T) => string): Map<string, number> {
  const counts = new Map<string, number>()
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1)
  return counts
}

/** Accounts whose payments' effects are not in increasing post order within `effects`. */
function accountsOutOfOrder(effects: readonly Effect[]): number {
  const last = new Map<string, number>()
  const broken = new Set<string>()
  for (const e of effects) {
    if (!e.key.startsWith('pay-')) continue
    if ((last.get(e.detail) ?? -1) >= e.seq) broken.add(e.detail)
    last.set(e.detail, e.seq)
  }
  return broken.size
}

/** Adds it all up. */
export function crashAccount(o: CrashObservation): CrashAccount {
  const all = [...o.before, ...o.after]
  const per = countBy(all, (e) => e.key)
  const ranBefore = new Set(o.before.map((e) => e.key))
  const ranAfter = new Set(o.after.map((e) => e.key))
  const highest = Math.max(o.posted - 1, ...all.map((e) => e.seq))
  const posted = highest + 1
  let lostAcknowledged = 0
  let unacknowledgedRan = 0
  for (let seq = 0; seq < posted; seq++) {
    const ran = per.has(idempotencyKey(seq))
    if (seq < o.acked && !ran) lostAcknowledged++
    if (seq >= o.acked && ran) unacknowledgedRan++
  }
  const counts = [...per.values()]
  const twiceKeys = [...per].filter(([, n]) => n === 2).map(([key]) => key)
  const states = [...o.recovered.values()]
  return {
    posted,
    acked: o.acked,
    recovered: {
      queued: states.filter((s) => s === 'queued').length,
      delayed: states.filter((s) => s === 'delayed').length,
      backingOff: states.filter((s) => s === 'retry-scheduled').length,
    },
    resumedAfterCharge: [...o.charged].filter((key) => per.get(key) === 1).length,
    completed: per.size,
    completedBefore: ranBefore.size,
    lostAcknowledged,
    unacknowledgedRan,
    unacknowledgedLost: posted - o.acked - unacknowledgedRan,
    once: counts.filter((n) => n === 1).length,
    twice: twiceKeys.length,
    more: counts.filter((n) => n > 2).length,
    twiceUncommitted: twiceKeys.filter((key) => o.recovered.has(key)).length,
    committedRanAgain: [...ranBefore].filter((key) => ranAfter.has(key) && !o.recovered.has(key)).length,
    outOfOrder: accountsOutOfOrder(o.before) + accountsOutOfOrder(o.after),
    early: all.filter((e) => e.detail === 'EARLY').length,
  }
}

/** Whether the account adds up: nothing acknowledged lost, no committed completion redone, order and time kept. */
export function accountHolds(a: CrashAccount): boolean {
  return (
    a.lostAcknowledged === 0 &&
    a.committedRanAgain === 0 &&
    a.more === 0 &&
    a.twice === a.twiceUncommitted &&
    a.outOfOrder === 0 &&
    a.early === 0 &&
    a.completed === a.acked + a.unacknowledgedRan
  )
}
