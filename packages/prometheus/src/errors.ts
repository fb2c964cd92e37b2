/**
 * The errors of `@flowing/prometheus`. Bad options throw core's `InvalidArgumentError`; this file holds
 * the one failure that is not about an option's shape.
 *
 * @module
 */
import { FlowingError } from '@flowing/errors'

/**
 * The loop is already exported to this registry under this prefix, or another loop already uses the
 * same `loop` label there: the second set of series would be indistinguishable from the first.
 *
 * @remarks Registration is once per (registry, prefix, loop): call `unregister()` on the first handle
 * before registering again, or give the second loop its own `labels: { loop: '…' }`.
 *
 * @group Errors
 */
export class MetricsRegisteredError extends FlowingError {
  /** Stable machine-readable code. */
  declare readonly code: 'ERR_FLOWING_PROMETHEUS_REGISTERED'
  /** The `loop` label value that is taken. */
  readonly loop: string
  /** The metric name prefix. */
  readonly prefix: string

  /**
   * @param loop - the `loop` label value
   * @param prefix - the metric name prefix
   * @param sameLoop - whether it is the same loop object registered twice (else a second loop with the label)
   */
  constructor(loop: string, prefix: string, sameLoop: boolean) {
    super(
      'ERR_FLOWING_PROMETHEUS_REGISTERED',
      sameLoop
        ? `This loop is already exported to this registry with prefix \`${prefix}\` (loop="${loop}"); call unregister() on the first handle before registering it again`
        : `Another loop is already exported to this registry with prefix \`${prefix}\` and loop="${loop}"; give each loop its own \`labels: { loop: '…' }\``,
    )
    this.loop = loop
    this.prefix = prefix
  }
}
