/**
 * The journal's wiring: the journal stage over the `store` option, the ledger's durable keys, the
 * transitions a restart must know, and the recovery before the first start. Nothing here runs per
 * message.
 *
 * @module
 */
import type { Clock } from '../contracts/clock.js'
import type { DeadLetter } from '../contracts/failures.js'
import type { MessageMap } from '../contracts/message.js'
import type { ResolvedLoopOptions } from '../contracts/options.js'
import type { LoopSnapshot } from '../contracts/snapshot.js'
import type { KeyRecord, StoreContents } from '../contracts/store.js'
import type { Registry } from '../dispatcher/registry.js'
import { Idempotency, type LedgerSlot } from '../idempotency/ledger.js'
import type { LoopEmitter } from '../internal/loop-emitter.js'
import type { PostExtras } from '../internal/post-extras.js'
import { Journal } from '../journal/journal.js'
import { JournaledKeys } from '../journal/keys.js'
import type { RecordParts } from '../journal/records.js'
import { type RecoveryParts, recoverJournal } from '../journal/recovery.js'
import type { Lifecycle } from '../lifecycle/lifecycle.js'

/** What the journal's wiring reads. */
export interface DurabilityParts<M extends MessageMap> {
  readonly options: Pick<ResolvedLoopOptions, 'store' | 'idempotency' | 'maxCrashes'>
  readonly clock: Clock
  readonly events: LoopEmitter<M>
  readonly records: RecordParts
  readonly registry: Pick<Registry<M>, 'maxCrashesFor'>
}

/** The journal over the `store` option (undefined without one). */
export function newJournal<M extends MessageMap>(p: DurabilityParts<M>): Journal<M> | undefined {
  const { options, clock, events, records, registry } = p
  if (options.store === undefined) return undefined
  return new Journal<M>(options.store, {
    clock,
    events,
    extras: records.extras,
    traces: records.traces,
    ledger: records.ledger,
    maxCrashesFor: (type) => registry.maxCrashesFor(type) ?? options.maxCrashes,
  })
}

/** The ledger's finished keys in the journal, unless the ledger has a store of its own. */
export function newJournaledKeys<M extends MessageMap>(
  p: DurabilityParts<M>,
  journal: Journal<M> | undefined,
): JournaledKeys | undefined {
  const idempotency = p.options.idempotency
  if (journal === undefined || idempotency?.store !== undefined) return undefined
  return new JournaledKeys(idempotency?.maxKeys ?? 100_000, p.clock, journal)
}

/** The idempotency ledger (made when first needed): its finished keys are journaled with a store. */
export function newLedger<M extends MessageMap>(
  p: Omit<DurabilityParts<M>, 'records' | 'registry'> & {
    readonly extras: PostExtras
    readonly keys: JournaledKeys | undefined
  },
): Idempotency {
  const onError = (error: unknown, key: string) => p.events.emit('ledger-error', error, key)
  const options = p.options.idempotency ?? {}
  const store = p.keys === undefined ? options : { ...options, store: p.keys }
  return new Idempotency(store, p.clock, p.extras, onError)
}

/** The waits and dead letters a restart must know, reaching the journal. */
export function journalTransitions<M extends MessageMap>(
  journal: Journal<M> | undefined,
  waits: readonly { journalTo(journal: Journal<M>): void }[],
  deadLetters: { watch(changed: (id: string, letter: DeadLetter | null) => void): void },
): void {
  if (journal === undefined) return
  for (const wait of waits) wait.journalTo(journal)
  deadLetters.watch((id, letter) => journal.letter(id, letter))
}

/** What a recovery before the first start reaches. */
export interface RecoverParts<M extends MessageMap> {
  readonly journal: RecoveryParts<M>['journal'] | undefined
  readonly keys: JournaledKeys | undefined
  readonly ledger: LedgerSlot
  readonly lifecycle: Pick<Lifecycle, 'stopping'>
  readonly clock: Clock
  readonly events: LoopEmitter<M>
  readonly deadLetters: { load(letters: StoreContents['deadLetters']): void }
}

/** Recovers the journal (once; see `recoverJournal`); `restore` re-admits what it held. */
export function recover<M extends MessageMap>(p: RecoverParts<M>, restore: (snapshot: LoopSnapshot) => number): void {
  const { journal, keys, ledger, lifecycle, clock, events, deadLetters } = p
  if (journal === undefined) return
  const loadKeys = (records: readonly KeyRecord[]) => {
    ledger.ensure()
    keys?.load(records)
  }
  recoverJournal({ lifecycle, journal, restore, deadLetters, loadKeys, clock, events })
}
