/** The partition assignment every process computes alike: balanced, and stable as members change. */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { assign } from '../src/internal/assignment.js'

const memberId = fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 8, maxLength: 32 })
const members = fc.uniqueArray(memberId, { minLength: 1, maxLength: 12 })

describe('assign()', () => {
  it('gives every member ⌊P/n⌋ or ⌈P/n⌉ partitions, the same for the same members in any order', () => {
    fc.assert(
      fc.property(members, fc.integer({ min: 1, max: 256 }), (ms, P) => {
        const owners = assign([...ms].sort(), P)
        expect(owners).toHaveLength(P)
        const counts = ms.map((m) => owners.filter((o) => o === m).length)
        expect(Math.max(...counts)).toBeLessThanOrEqual(Math.ceil(P / ms.length))
        expect(Math.min(...counts)).toBeGreaterThanOrEqual(Math.floor(P / ms.length))
        expect(assign([...ms].reverse().sort(), P)).toEqual(owners)
      }),
    )
  })

  it('moves few partitions when a member joins: about its share, not a reshuffle', () => {
    fc.assert(
      fc.property(members, memberId, (ms, joiner) => {
        fc.pre(!ms.includes(joiner))
        const P = 64
        const before = assign([...ms].sort(), P)
        const after = assign([...ms, joiner].sort(), P)
        const moved = before.filter((o, p) => after[p] !== o).length
        // The joiner's share, plus what the cap shifts between the others: far from all P.
        expect(moved).toBeLessThanOrEqual(2 * Math.ceil(P / (ms.length + 1)) + ms.length)
      }),
    )
  })
})
