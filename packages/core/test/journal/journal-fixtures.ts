/** Helpers shared by the journaled-loop tests: a loop over a store on a virtual clock, and what the store holds. */
import { createLoop, type LoopOptions, type MemoryStore, type Store, VirtualClock } from '../../src/index.js'

/** The message map of the journaled-loop tests. */
export interface Jobs {
  job: { n: string; total?: unknown }
}

/** A loop with one worker over `store` on a virtual clock (not started: a journaled loop waits for `start()`). */
export function loopOn(store: Store, clock = new VirtualClock(), options: LoopOptions = {}) {
  const loop = createLoop<Jobs>({ clock, logger: false, store, workers: 1, ...options })
  const ran: string[] = []
  return { loop, clock, ran }
}

/** Lets the journal's once-per-turn commit run (a zero-delay timer on the virtual clock). */
export async function settle(clock: VirtualClock, ms = 0): Promise<void> {
  await clock.advance(ms)
  await clock.advance(0)
}

/** What the store holds now, as `payload.n/state` (MemoryStore.recovered() reads the committed tables). */
export const payloads = (store: MemoryStore) =>
  store.recovered().messages.map((r) => `${(JSON.parse(r.payloadJson ?? '{}') as { n: string }).n}/${r.state}`)
