/**
 * Suggests the closest known name for a misspelt one, for config errors that
 * say what was meant instead of only what was wrong: the one did-you-mean of
 * every layer (options, CLI flags and commands, environment variables). Pure.
 */

/**
 * Edit distance (insertions, deletions, substitutions) between two strings.
 *
 * @example
 * ```ts
 * editDistance('heartbeat', 'heartbeat') // => 0
 * editDistance('maxPaylod', 'maxPayload') // => 1
 * editDistance('', 'abc') // => 3
 * ```
 */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      // In range: prev and row hold b.length + 1 entries and j - 1 < row.length.
      row.push(Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost));
    }
    prev = row;
  }
  return prev[b.length]!; // prev holds b.length + 1 entries
}

/**
 * The known name closest to `name`, compared case-insensitively, or `null`
 * when none is within a third of the name's length (at least 2 edits).
 *
 * @example
 * ```ts
 * didYouMean('maxPaylod', ['maxPayload', 'heartbeatMs']) // => 'maxPayload'
 * didYouMean('HEARTBEATMS', ['maxPayload', 'heartbeatMs']) // => 'heartbeatMs'
 * didYouMean('colour', ['maxPayload', 'heartbeatMs']) // => null
 * ```
 */
export function didYouMean(name: string, known: readonly string[]): string | null {
  const limit = Math.max(2, Math.floor(name.length / 3));
  let best: string | null = null;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const d = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return bestDistance <= limit ? best : null;
}
