/**
 * The transport contract, in the spirit of Watermill's universal pub/sub tests: one suite of cases
 * that every implementation of the message loop — the in-process loop of `@flowing/core`, the
 * distributed one of `@flowing/nats` — must pass through the small interface of `./transport.ts`.
 *
 * A case an implementation cannot run (it lacks the capability) is reported as skipped with why in
 * its name; a case an implementation fails because of a known bug runs with the bug in its name and
 * must fail at least once in {@link BUG_TRIES} tries (a race-dependent bug does not show every time),
 * so the suite goes red the day the bug is fixed and the mark must go.
 *
 * @example
 * ```ts
 * transportContract('core loop (MemoryStore journal)', coreTransport())
 * ```
 */
import { afterEach, describe, it } from 'vitest'
import { deliveryCases } from './delivery-cases.js'
import { distributedCases } from './distributed-cases.js'
import { durabilityCases } from './durability-cases.js'
import type { ContractMessages, TransportCapabilities, TransportFactory, TransportUnderTest } from './transport.js'

/** Tries a known bug gets to show (each on fresh transports): it passed once in ~14 runs alone. */
const BUG_TRIES = 3

/** How an implementation runs the contract. */
export interface ContractOptions {
  /** fast-check runs per property (each opens a fresh transport; keep it small on a real broker). @defaultValue 10 */
  readonly runs?: number
  /** Cases this implementation fails because of a known bug, by title: the bug (file, line, why). */
  readonly knownBugs?: Readonly<Record<string, string>>
}

/** A capability a case needs beyond the common core. */
export type Need = keyof Pick<TransportCapabilities, 'crossProcess' | 'reconnect'>

/** What a group of cases is given. */
export interface Kit {
  /** fast-check runs per property. */
  readonly runs: number
  /** Opens a fresh transport (disposed after the case). */
  make(): Promise<TransportUnderTest<ContractMessages>>
  /** Registers a process the case opened itself (`restart()`, `peer()`) for disposal. */
  track(t: TransportUnderTest<ContractMessages>): TransportUnderTest<ContractMessages>
  /** Declares a case: skipped (N/A, with why) without `needs`; a known bug must show (see above). */
  case(title: string, body: () => Promise<void>, needs?: Need): void
}

// Runs a known bug's case until it fails (the bug showed); passing every try means it is fixed.
async function expectBug(
  title: string,
  body: () => Promise<void>,
  open: TransportUnderTest<ContractMessages>[],
): Promise<void> {
  for (let i = 0; i < BUG_TRIES; i++) {
    const failed = await body().then(
      () => false,
      () => true,
    )
    await Promise.allSettled(open.splice(0).map((t) => t.dispose()))
    if (failed) return
  }
  throw new Error(`${title}: passed ${BUG_TRIES} tries in a row — the known bug looks fixed, remove its mark`)
}

/** Registers the contract's cases for one implementation. */
export function transportContract(
  name: string,
  factory: TransportFactory<ContractMessages>,
  options: ContractOptions = {},
): void {
  describe(`transport contract: ${name}`, () => {
    const open: TransportUnderTest<ContractMessages>[] = []
    const bugs = new Map(Object.entries(options.knownBugs ?? {}))
    afterEach(async () => {
      await Promise.allSettled(open.splice(0).map((t) => t.dispose()))
    })
    const kit: Kit = {
      runs: options.runs ?? 10,
      track: (t) => {
        open.push(t)
        return t
      },
      make: async () => kit.track(await factory.open()),
      case: (title, body, needs) => {
        const missing = needs === undefined || factory.capabilities[needs] ? undefined : needs
        if (missing !== undefined) {
          const why = factory.capabilities.notApplicable?.[missing] ?? `no ${missing} capability`
          it.skip(`${title} — N/A for ${name}: ${why}`, body)
          return
        }
        const bug = bugs.get(title)
        bugs.delete(title)
        if (bug === undefined) it(title, body)
        else it(`${title} — KNOWN BUG: ${bug}`, () => expectBug(title, body, open))
      },
    }
    deliveryCases(kit)
    distributedCases(kit)
    durabilityCases(kit)
    it('declares the capabilities its processes report, and no known bug of a case it does not have', async () => {
      const t = await kit.make()
      if (JSON.stringify(t.capabilities) !== JSON.stringify(factory.capabilities)) {
        throw new Error(
          `the factory declares ${JSON.stringify(factory.capabilities)}, a process ${JSON.stringify(t.capabilities)}`,
        )
      }
      if (bugs.size > 0) throw new Error(`known bugs of no case: ${[...bugs.keys()].join('; ')}`)
    })
  })
}
