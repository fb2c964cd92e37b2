/**
 * The did-you-mean of every Flowing option check: the known name nearest to a misspelt one.
 *
 * @module
 */

/**
 * The entry of `candidates` within two edits of `word` (case ignored; the closest, first on ties), if
 * any — for an "unknown option `capasity`; did you mean `capacity`?" error.
 *
 * @example
 * ```ts
 * import { closestName } from '@flowing/errors'
 *
 * console.log(closestName('capasity', ['capacity', 'workers'])) // capacity
 * ```
 *
 * @group Errors
 */
export function closestName(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined
  let bestDistance = 3
  for (const candidate of candidates) {
    const d = editDistance(word.toLowerCase(), candidate.toLowerCase(), bestDistance)
    if (d < bestDistance) {
      best = candidate
      bestDistance = d
    }
  }
  return best
}

// Optimal-string-alignment distance (insert, delete, substitute, swap two neighbours), giving up at
// `limit`: option names are short, so the O(|a|·|b|) table is a few hundred cells.
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) >= limit) return limit
  let before: number[] = []
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let d = Math.min((previous[j] as number) + 1, (row[j - 1] as number) + 1, (previous[j - 1] as number) + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, (before[j - 2] as number) + 1)
      row.push(d)
    }
    before = previous
    previous = row
  }
  return previous[b.length] as number
}
