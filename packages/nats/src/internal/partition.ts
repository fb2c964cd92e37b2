/**
 * Which partition a message goes to: `hash(key) % P`, with FNV-1a over the key tagged by its type, so
 * the key `1` and the key `'1'` stay two keys (as they are in the in-process loop).
 *
 * @module
 */
import type { MessageKey } from '@flowing/core'

/**
 * The partition of a key, or of a keyless message's id (keyless messages need no order; their ids
 * spread them over every partition).
 */
export function partitionOf(key: MessageKey | undefined, id: string, partitions: number): number {
  return partitionOfText(key === undefined ? `i${id}` : typeof key === 'number' ? `n${key}` : `s${key}`, partitions)
}

/**
 * The partition of a message: its key's, or for a keyless one, its idempotency key's (so a second post
 * with the same idempotency key reaches the same stream, whose duplicate window refuses it) or its id's.
 */
export function partitionOfWire(
  w: { readonly key: MessageKey | undefined; readonly id: string; readonly idempotencyKey: string | undefined },
  partitions: number,
): number {
  return partitionOf(w.key, w.idempotencyKey ?? w.id, partitions)
}

function partitionOfText(text: string, partitions: number): number {
  return fnv1a(text) % partitions
}

// FNV-1a, 32 bits, over UTF-16 code units: stable across processes, Node versions and machines.
function fnv1a(text: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return hash >>> 0
}
