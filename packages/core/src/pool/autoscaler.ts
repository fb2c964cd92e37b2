/**
 * The worker autoscaler: a feedback controller that moves the pool's size within `[min, max]`.
 *
 * @module
 */
import type { Clock, TimerHandle } from '../contracts/clock.js'
import type { ResolvedAutoscale, WorkersChange, WorkersChangeReason } from '../contracts/pool.js'

/** What the autoscaler reads of the loop and the one thing it does to it. */
export interface ScalerProbe {
  /** Messages waiting in the queue. */
  backlog(): number
  /** Handlers running. */
  running(): number
  /** The pool's size. */
  size(): number
  /** Attempts completed so far (succeeded + failed): a counter that only grows. */
  completed(): number
  /** False once the loop is stopped: sampling ends. */
  active(): boolean
  /** Sets the pool's size. */
  resize(size: number): void
  /** Reports a change (the `workers` event). */
  changed(change: WorkersChange): void
}

// A change on trial: judged on the window since it, once the cooldown has passed.
interface Trial {
  readonly from: number
  readonly to: number
  // Throughput at `from` when the change was made.
  readonly baseline: number
}

// A size remembered as too big (ceiling) or too small (floor), until `until`.
interface Bound {
  readonly size: number
  readonly until: number
}

/** How far a shrink probe steps down. */
const PROBE_FACTOR = 0.85

/**
 * Grows the pool while work waits and more workers help, shrinks it when workers idle or more of
 * them do not help: a hill-climb on measured throughput with memory.
 *
 * ## Algorithm
 * Every `intervalMs` it samples backlog (queue length), running, size, completed attempts and
 * event-loop utilization (ELU). Changes are at least `cooldownMs` apart, and each change is a *trial*
 * judged on the throughput of the whole window since it (so the window is never shorter than the cooldown):
 * 1. **Grow** (`backlog`) when the backlog is not falling (≥ 90 % of the previous sample's), every
 *    worker is busy and ELU < `utilizationCeiling`: size × `growFactor` (at least +1), below any
 *    ceiling (bisecting toward it), at most `max`. A CPU-bound load saturates ELU and never grows.
 * 2. **Judge a grow**: throughput must rise by `minGain` for a full step (pro rata for a smaller one,
 *    at least a quarter of it); otherwise step back (`no-gain`) and remember the grown size as a
 *    ceiling for `memoryMs`. If the backlog vanished meanwhile the load, not the pool, limited
 *    throughput: the grow stands.
 * 3. **Probe** (`probe`) when saturated but unable to grow (ceiling, `max` or ELU): size × 0.85, above
 *    any floor; a probe that loses more than `minGain / 2` is undone (`loss`) and its size becomes a
 *    floor. So a plateau or a decline past the knee (a shared lock) settles near the knee from above.
 * 4. **Shrink when idle** (`idle`): no backlog and fewer than half the workers busy for `idleSamples`
 *    samples in a row: down to 1.5 × the peak busy count seen, at least `min`. Growing needs every
 *    worker busy, shrinking half idle: the gap is the hysteresis.
 *
 * @remarks Resizing never breaks per-key order: the run queue, not worker identity, serializes keys.
 * One timer, re-armed per sample, unref'd at {@link Autoscaler.stop} (its clock is the loop's
 * releasable one) and not re-armed once the loop is stopped. O(1) per sample.
 */
export class Autoscaler {
  readonly #o: ResolvedAutoscale
  readonly #clock: Clock
  readonly #probe: ScalerProbe
  #timer: TimerHandle | undefined = undefined
  #stopped = false
  // The window of the current size: since the last change (or the start).
  #windowAt = 0
  #windowCompleted = 0
  // The previous sample's backlog (is it falling?), and the consecutive idle samples with their peak.
  #lastBacklog = 0
  #idle = 0
  #idlePeak = 0
  #lastChangeAt = Number.NEGATIVE_INFINITY
  #trial: Trial | undefined = undefined
  #ceiling: Bound | undefined = undefined
  #floor: Bound | undefined = undefined
  readonly #onTick = (): void => {
    this.#timer = undefined
    if (this.#stopped || !this.#probe.active()) return
    this.sample()
    this.#arm()
  }

  /**
   * @param options - the resolved range and tuning
   * @param clock - the loop's releasable clock
   * @param probe - what it reads and resizes
   */
  constructor(options: ResolvedAutoscale, clock: Clock, probe: ScalerProbe) {
    this.#o = options
    this.#clock = clock
    this.#probe = probe
  }

  /** Starts sampling (idempotent). */
  start(): void {
    if (this.#stopped || this.#timer !== undefined) return
    this.#windowAt = this.#clock.now()
    this.#windowCompleted = this.#probe.completed()
    this.#o.utilization() // the first delta starts now
    this.#arm()
  }

  /** Stops for good: the pending sample is cleared. */
  stop(): void {
    this.#stopped = true
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer)
    this.#timer = undefined
  }

  /** True until {@link Autoscaler.stop}. */
  get enabled(): boolean {
    return !this.#stopped
  }

  /** Takes one sample and decides (the timer calls it; tests may too). */
  sample(): void {
    const p = this.#probe
    const now = this.#clock.now()
    const backlog = p.backlog()
    const running = p.running()
    const size = p.size()
    const utilization = this.#o.utilization()
    const span = now - this.#windowAt
    const throughput = span > 0 ? ((p.completed() - this.#windowCompleted) * 1000) / span : 0
    const falling = backlog < 0.9 * this.#lastBacklog
    this.#lastBacklog = backlog
    this.#countIdle(backlog, running, size)
    if (now - this.#lastChangeAt < this.#o.cooldownMs) return
    const s: Sample = { now, backlog, running, size, utilization, throughput, falling }
    const target = this.#decide(s)
    if (target !== size) this.#change(s, target)
  }

  #decide(s: Sample): number {
    const trial = this.#trial
    this.#trial = undefined
    if (trial !== undefined && trial.to === s.size) {
      const back = this.#judge(trial, s)
      if (back !== undefined) return back
    }
    if (this.#idle >= this.#o.idleSamples) {
      this.#reason = 'idle'
      return Math.max(this.#o.min, Math.min(s.size, Math.ceil(1.5 * this.#idlePeak)))
    }
    const saturated = s.backlog > 0 && s.running >= s.size
    if (!saturated) return s.size
    const grow = s.falling || s.utilization >= this.#o.utilizationCeiling ? s.size : this.#growTarget(s)
    if (grow > s.size) {
      this.#reason = 'backlog'
      this.#trial = { from: s.size, to: grow, baseline: s.throughput }
      return grow
    }
    const probe = this.#probeTarget(s)
    if (probe < s.size) {
      this.#reason = 'probe'
      this.#trial = { from: s.size, to: probe, baseline: s.throughput }
    }
    return probe
  }

  // A trial's verdict: the size to step back to, or undefined when the change stands.
  #judge(trial: Trial, s: Sample): number | undefined {
    if (s.backlog === 0 && !(trial.to < trial.from)) return undefined // demand-limited: not the pool's doing
    const { minGain, growFactor, memoryMs } = this.#o
    if (trial.to > trial.from) {
      const step = (trial.to - trial.from) / trial.from / (growFactor - 1)
      const needed = minGain * Math.min(1, Math.max(0.25, step))
      if (s.throughput >= trial.baseline * (1 + needed)) return undefined
      this.#ceiling = { size: trial.to, until: s.now + memoryMs }
      this.#reason = 'no-gain'
      return trial.from
    }
    if (s.throughput >= trial.baseline * (1 - minGain / 2)) return undefined
    this.#floor = { size: trial.to, until: s.now + memoryMs }
    this.#reason = 'loss'
    return trial.from
  }

  #growTarget(s: Sample): number {
    let target = Math.min(this.#o.max, Math.max(s.size + 1, Math.round(s.size * this.#o.growFactor)))
    const ceiling = this.#bound(this.#ceiling, s.now)
    if (ceiling !== undefined && target >= ceiling) target = Math.floor((s.size + ceiling) / 2)
    return Math.max(s.size, target)
  }

  #probeTarget(s: Sample): number {
    const floor = this.#bound(this.#floor, s.now) ?? this.#o.min - 1
    let target = Math.max(this.#o.min, Math.floor(s.size * PROBE_FACTOR))
    if (target <= floor) target = Math.ceil((s.size + floor) / 2)
    return Math.min(s.size, Math.max(this.#o.min, target))
  }

  #bound(b: Bound | undefined, now: number): number | undefined {
    return b !== undefined && b.until > now ? b.size : undefined
  }

  // Idle: no backlog and fewer than half the workers busy; the streak ends at the first busy sample.
  #countIdle(backlog: number, running: number, size: number): void {
    if (backlog === 0 && running < size / 2) {
      this.#idlePeak = this.#idle === 0 ? running : Math.max(this.#idlePeak, running)
      this.#idle++
    } else this.#idle = 0
  }

  // The reason #decide chose (set beside the target it returns).
  #reason: WorkersChangeReason = 'backlog'

  #change(s: Sample, to: number): void {
    this.#lastChangeAt = s.now
    this.#windowAt = s.now
    this.#windowCompleted = this.#probe.completed()
    this.#idle = 0
    this.#probe.resize(to)
    this.#probe.changed({
      from: s.size,
      to,
      reason: this.#reason,
      at: s.now,
      backlog: s.backlog,
      running: s.running,
      throughput: s.throughput,
      utilization: s.utilization,
    })
  }

  #arm(): void {
    this.#timer = this.#clock.setTimeout(this.#onTick, this.#o.intervalMs)
    unrefTimer(this.#timer)
  }
}

// One sample's readings.
interface Sample {
  readonly now: number
  readonly backlog: number
  readonly running: number
  readonly size: number
  readonly utilization: number
  readonly throughput: number
  readonly falling: boolean
}

// A sampling timer never keeps the process alive by itself: the loop's work does, or nothing should.
function unrefTimer(handle: TimerHandle): void {
  const fn = (handle as { unref?: unknown } | null)?.unref
  if (typeof fn === 'function') fn.call(handle)
}
