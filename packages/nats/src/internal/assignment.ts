/**
 * Which process owns which partition: rendezvous hashing capped at each member's share, so that every
 * process that sees the same members computes the same, balanced answer, and few partitions move when
 * a member comes or goes.
 *
 * @module
 */

/**
 * Which member owns each partition: for each partition in turn, the member with the highest
 * rendezvous hash of (member, partition) among those that do not yet have their share (⌊P / members⌋, or one more for P mod members of them)
 * — the same answer in every process that sees the same members, balanced, and moving few partitions
 * when a member comes or goes. `members` sorted, not empty.
 */
export function assign(members: readonly string[], partitions: number): string[] {
  const floor = Math.floor(partitions / members.length)
  let larger = partitions % members.length // members that may take one more than the floor
  const load = new Map(members.map((m) => [m, 0]))
  const owners: string[] = []
  for (let p = 0; p < partitions; p++) {
    let best: string | undefined
    let bestScore = -1
    for (const m of members) {
      const n = load.get(m) ?? 0
      const room = n < floor || (n === floor && larger > 0)
      const score = fnv1a(`${m}/${p}`)
      if (room && score > bestScore) {
        best = m
        bestScore = score
      }
    }
    const owner = best as string
    const n = (load.get(owner) ?? 0) + 1
    if (n > floor) larger--
    load.set(owner, n)
    owners.push(owner)
  }
  return owners
}

/** FNV-1a, 32 bits, then murmur3's finalizer (names that differ in one last character must spread). */
function fnv1a(text: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}
