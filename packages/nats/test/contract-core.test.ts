/**
 * The transport contract on the in-process loop of `@flowing/core`, its durable state a journal
 * `MemoryStore` (a restart reopens it; a kill abandons the loop). Consumer groups and reconnects are
 * not applicable: the suite reports them skipped, with why.
 */
import { coreTransport } from './contract/core-adapter.js'
import { transportContract } from './contract/transport-contract.js'

transportContract('core loop (MemoryStore journal)', coreTransport(), { runs: 25 })
