/**
 * Test helpers: a virtual clock and a reference model of the level function, written from the spec
 * rather than from the implementation (plain arrays, no early exits, no clock savings).
 */
import type { PressureLevel } from '../src/index.js'

export const LEVELS: readonly PressureLevel[] = ['normal', 'warn', 'shed', 'reject']

/** A virtual ms clock. */
export class Clock {
  time = 0
  readonly now = (): number => this.time
}

/** Marks by level rank 1..3, as `[enter, exit]`. */
export type Marks = readonly [readonly [number, number], readonly [number, number], readonly [number, number]]

export const DEFAULT_MARKS: Marks = [
  [0.6, 0.5],
  [0.8, 0.7],
  [0.95, 0.85],
]

/**
 * The level after `fill`, from level rank `current`: the highest level whose enter ≤ fill if that is
 * above the current one; otherwise, if the dwell allows, the lowest level reachable by leaving every
 * level whose exit is above the fill; otherwise the current level.
 */
export function referenceLevel(current: number, fill: number, marks: Marks, dwellOk: boolean): number {
  const raised = marks.reduce((level, [enter], i) => (fill >= enter ? i + 1 : level), 0)
  if (raised > current) return raised
  if (!dwellOk) return current
  let level = current
  while (level > 0 && fill < (marks[level - 1] as readonly [number, number])[1]) level--
  return level
}
