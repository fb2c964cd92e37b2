/**
 * What of a payload leaves the server: nothing but its size unless the app allows payloads, and then
 * what its type's redactor returns.
 *
 * @module
 */
import type { Redactor } from '../options.js'

/**
 * A payload the dashboard does not show: its size in bytes of JSON (or `undefined` when it cannot be
 * serialized).
 *
 * @group Views
 */
export interface HiddenPayload {
  readonly hidden: true
  readonly bytes: number | undefined
}

/** Payload policy of one dashboard. */
export class Redaction {
  /**
   * @param shown - whether payloads may be shown
   * @param redact - per-type redactors (`'*'`: every other type)
   */
  constructor(
    readonly shown: boolean,
    readonly redact: Readonly<Record<string, Redactor>>,
  ) {}

  /** What the dashboard shows of `payload`, a message of `type`'s. */
  payload(type: string, payload: unknown): unknown {
    if (!this.shown) return { hidden: true, bytes: sizeOf(payload) } satisfies HiddenPayload
    const redactor = Object.hasOwn(this.redact, type) ? this.redact[type] : this.redact['*']
    if (redactor === undefined) return jsonSafe(payload)
    try {
      return jsonSafe(redactor(payload, type))
    } catch {
      return '[redactor threw]'
    }
  }
}

function sizeOf(payload: unknown): number | undefined {
  try {
    const json = JSON.stringify(payload)
    return json === undefined ? undefined : Buffer.byteLength(json)
  } catch {
    return undefined
  }
}

// A JSON round trip: what the page receives is what JSON can carry (a BigInt or a cycle shows as a note).
function jsonSafe(value: unknown): unknown {
  try {
    const json = JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? `${v}n` : v))
    return json === undefined ? null : JSON.parse(json)
  } catch {
    return '[not serializable]'
  }
}
