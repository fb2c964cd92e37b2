/**
 * The machine a sweep ran on: figures are only comparable on one machine, and a loaded one explains
 * a noisy run.
 *
 * @module
 */
import os from 'node:os'

/**
 * The machine and runtime of a sweep.
 *
 * @group Report
 */
export interface MachineInfo {
  /** CPU model of the first core. */
  readonly cpu: string
  /** Cores Node may use (`os.availableParallelism()`). */
  readonly cores: number
  /** 1-, 5- and 15-minute load averages when the report was made (0 on Windows). */
  readonly loadAverage: readonly [number, number, number]
  /** `process.version`. */
  readonly node: string
}

/**
 * Reads the machine facts now.
 *
 * @group Report
 */
export function describeMachine(): MachineInfo {
  const [one = 0, five = 0, fifteen = 0] = os.loadavg()
  return {
    cpu: os.cpus()[0]?.model.trim() || 'unknown CPU',
    cores: os.availableParallelism(),
    loadAverage: [one, five, fifteen],
    node: process.version,
  }
}

/**
 * `Machine: AMD EPYC 7B13 × 2 cores, load average 1.52 / 1.10 / 0.90; Node v20.20.0.`
 *
 * @group Report
 */
export function formatMachineInfo(m: MachineInfo): string {
  const load = m.loadAverage.map((v) => v.toFixed(2)).join(' / ')
  const busy = m.loadAverage[0] > m.cores ? ` (above the ${m.cores} cores: other work competed for the CPU)` : ''
  return `Machine: ${m.cpu} × ${m.cores} core${m.cores === 1 ? '' : 's'}, load average ${load}${busy}; Node ${m.node}.`
}
