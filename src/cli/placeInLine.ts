/** A place in line in words, for the commands that print one (`enqueue`, `retry`, `show`). */

/**
 * What a position means to the person who enqueued (docs/runner-pool.md):
 * 0 is a runner granted at once, not a place in line.
 *
 * @example
 * ```ts
 * placeInLine(0) // => 'granted a runner at once'
 * placeInLine(1) // => 'queued, next in line'
 * placeInLine(3) // => 'queued, position 3 in line'
 * ```
 */
export function placeInLine(position: number): string {
  if (position === 0) return 'granted a runner at once';
  return position === 1 ? 'queued, next in line' : `queued, position ${position} in line`;
}
