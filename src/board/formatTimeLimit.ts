/**
 * A time limit (`timeLimitMs`) as people write it: in the largest unit that
 * divides it (d, h, m, s), else in ms. What `roundtable enqueue
 * --time-limit` reads back, and what `show` and the job page print. No
 * dependencies: the page's bundle takes it.
 *
 * @example
 * ```ts
 * formatTimeLimit(1_800_000) // => '30m'
 * formatTimeLimit(5_400_000) // => '90m'
 * formatTimeLimit(172_800_000) // => '2d'
 * formatTimeLimit(90_000) // => '90s'
 * formatTimeLimit(1_500) // => '1500ms'
 * ```
 */
export function formatTimeLimit(ms: number): string {
  for (const [unit, size] of UNITS) if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

const UNITS: ReadonlyArray<readonly [string, number]> = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1_000],
];
