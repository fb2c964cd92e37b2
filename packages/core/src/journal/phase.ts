/**
 * The journal's run state as one value, and the only transitions it may make. The journal asks its
 * phase, never a set of flags: whether a flush is due, a commit is in flight, a failed one waits for
 * its retry, or `close()` began are one answer, so no combination of them can contradict another.
 *
 * ```text
 *            change                next turn (a small batch gathers ≤ 16 turns, ≤ 2 ms)
 *   idle ─────────────▶ scheduled ─────────────────────────────────────▶ committing
 *    ▲                                                                     │    │
 *    └───────────────────── committed (new changes: idle ─▶ scheduled) ────┘    │ failed
 *                                                                               ▼
 *                       committing ◀──── retry timer (50 ms, doubling to 5 s) ── backing-off
 *
 *   close():  idle · scheduled · backing-off ─▶ closing        committing ─▶ closing-commit
 *             closing ─(changes left)─▶ closing-commit ─(answered, either way)─▶ closing
 *             closing ─▶ closed   (nothing in flight, nothing left or two failures: the store is closed)
 * ```
 *
 * A commit is in flight in `committing` and `closing-commit`, never in another phase. While closing,
 * what is left commits at once, a failure is not retried (`close()` makes a second pass, then gives
 * up), and the store is closed only once no commit is in flight.
 *
 * @module
 */

/** Where the journal's commit loop is (see the module's diagram). */
export type JournalPhase = 'idle' | 'scheduled' | 'committing' | 'backing-off' | 'closing' | 'closing-commit' | 'closed'

// The legal transitions, in one place. `scheduled → idle` and `backing-off → idle` are a flush that
// found nothing to write (defensive: every wake-up has a change to write).
const NEXT: { readonly [P in JournalPhase]: readonly JournalPhase[] } = {
  idle: ['scheduled', 'closing'],
  scheduled: ['committing', 'idle', 'closing'],
  committing: ['idle', 'backing-off', 'closing-commit'],
  'backing-off': ['committing', 'idle', 'closing'],
  closing: ['closing-commit', 'closed'],
  'closing-commit': ['closing'],
  closed: [],
}

/**
 * `to`, when the journal may go there from `from`.
 * @throws Error (an internal error: a bug in Flowing, never the user's) for any other transition
 */
export function nextPhase(from: JournalPhase, to: JournalPhase): JournalPhase {
  const legal = NEXT[from]
  if (legal.includes(to)) return to
  const allowed = legal.length === 0 ? 'none' : legal.join(', ')
  throw new Error(`Flowing internal error: the journal cannot go from ${from} to ${to} (from ${from}: ${allowed})`)
}

/** Whether a commit the journal began may still be in the store's hands. */
export function commitsIn(phase: JournalPhase): boolean {
  return phase === 'committing' || phase === 'closing-commit'
}
