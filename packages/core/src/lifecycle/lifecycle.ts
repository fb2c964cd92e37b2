/**
 * The loop's run state, in one place. Every other stage asks it, never decodes flags of its own:
 *
 * ```
 *  created ─start()─▶ running ⇄ paused          (pause() / resume())
 *     │                  │
 *     └──── stop() ──────┴──▶ draining ──(deadline or signal)──▶ cut ──▶ stopped
 *                             │                                            ▲
 *                             └──────────── nothing left to run ───────────┘
 * ```
 *
 * `draining` comes in two flavours: a *draining* stop runs what is queued (and admits the follow-ups
 * of running handlers: they are part of the work being drained); a stop without drain cancels it. A
 * stop with a deadline or a signal *hands back* what it cannot finish (the snapshot); `cut` is the
 * moment that deadline passed. The public {@link LoopState} shows `cut` as `draining`.
 *
 * The answers other stages need on every message — may a root post or a follow-up be admitted, may a
 * failure be retried, may a handler start — are plain boolean fields recomputed at each transition.
 *
 * @module
 */
import type { LoopState } from '../contracts/events.js'

/** The run phases: the public states plus `cut` (a stop's deadline passed). */
type Phase = LoopState | 'cut'

/** The loop's run state and the decisions that follow from it. */
export class Lifecycle {
  /** Root posts (`post`, `send`, `postDelayed`, `restore`) are admitted. */
  admitsRoots = true
  /** Follow-ups (`ctx.post`) are admitted: as roots, and during a draining stop before its cut-off. */
  admitsFollowUps = true
  /** A failed attempt may be retried (not once a stop without drain began, nor after the cut-off). */
  mayRetry = true
  /** Handlers may start (running, or stopping). */
  dispatches = false
  // The phase; `state` is its public face.
  #phase: Phase
  // The stop drains what is queued (false: cancels it). Meaningful once stopping.
  #drain = true
  // The stop hands back what it cannot finish (it has a deadline or a signal).
  #handsBack = false
  // Reports each public state change (the loop's `state` event).
  readonly #onChange: (next: LoopState, previous: LoopState) => void

  /**
   * @param started - `autoStart`: begin `running` instead of `created`
   * @param onChange - told of every change of the public state
   */
  constructor(started: boolean, onChange: (next: LoopState, previous: LoopState) => void) {
    this.#phase = started ? 'running' : 'created'
    this.#onChange = onChange
    this.#recompute()
  }

  /** The public state (`cut` shows as `draining`). */
  get state(): LoopState {
    return this.#phase === 'cut' ? 'draining' : this.#phase
  }

  /** A stop began (draining, cut or stopped). */
  get stopping(): boolean {
    return this.#phase === 'draining' || this.#phase === 'cut' || this.#phase === 'stopped'
  }

  /** The stop drains what is queued (a stop without drain, or an escalated one, does not). */
  get draining(): boolean {
    return this.stopping && this.#drain
  }

  /** The stop hands unfinished messages back in its snapshot (it has a deadline or a signal). */
  get handsBack(): boolean {
    return this.#handsBack
  }

  /** The stop's deadline passed (or its signal aborted): everything left was handed back. */
  get cut(): boolean {
    return this.#phase === 'cut'
  }

  /** `created` or `paused` → `running`. */
  run(): void {
    this.#to('running')
  }

  /** `running` → `paused`. */
  pause(): void {
    this.#to('paused')
  }

  /** → `draining`; `drain` false cancels what is queued, `handsBack` keeps what is unfinished. */
  beginStop(drain: boolean, handsBack: boolean): void {
    this.#drain = drain
    this.#handsBack = handsBack
    this.#to('draining')
  }

  /** A draining stop ran out of patience (`stop({ drain: false })` during it). */
  escalate(): void {
    this.#drain = false
    this.#recompute()
  }

  /** A deadline or a signal was armed on the stop: unfinished messages go to the snapshot. */
  handBack(): void {
    this.#handsBack = true
  }

  /** The stop's deadline passed. */
  cutOff(): void {
    this.#handsBack = true
    this.#to('cut')
  }

  /** Nothing is left to run. */
  stopped(): void {
    this.#to('stopped')
  }

  #to(next: Phase): void {
    const previous = this.state
    this.#phase = next
    this.#recompute()
    if (this.state !== previous) this.#onChange(this.state, previous)
  }

  #recompute(): void {
    const phase = this.#phase
    const open = phase === 'created' || phase === 'running' || phase === 'paused'
    this.admitsRoots = open
    this.admitsFollowUps = open || (phase === 'draining' && this.#drain)
    this.mayRetry = open || (phase === 'draining' && this.#drain)
    this.dispatches = phase === 'running' || phase === 'draining' || phase === 'cut'
  }
}
