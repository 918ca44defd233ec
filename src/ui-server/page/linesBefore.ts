/**
 * The stored output's lines just before the ones a page shows: what "load
 * earlier lines" prepends. A page holds at most a budget of bytes, so an
 * answer may end short of the lines shown; prepended as it is, it would
 * leave a gap. Asked again for as many lines as fitted, it joins.
 */
import type { OutputPage } from '../../board/taskDetail.js';

/** How many times a short answer is asked again before the lines are given up on. */
const TRIES = 4;

/**
 * The lines `[from, before)` for some `from` as far back as `want` lines,
 * as one page that ends where the shown lines begin, or null when the
 * answers kept ending short.
 *
 * @example
 * ```ts
 * const store = Array.from({ length: 10 }, (_, i) => `l${i}`);
 * const fits = (n: number) => async (from: number, count: number) => ({ from, lines: store.slice(from, from + Math.min(count, n)), totalLines: 10 });
 * (await linesBefore(fits(5), 8, 3))?.lines // => ['l5', 'l6', 'l7']
 * (await linesBefore(fits(2), 8, 3))?.lines // => ['l6', 'l7']
 * (await linesBefore(fits(5), 2, 5))?.from // => 0
 * (await linesBefore(fits(0), 8, 3)) // => null
 * ```
 */
export async function linesBefore(
  read: (from: number, count: number) => Promise<OutputPage>,
  before: number,
  want: number,
): Promise<OutputPage | null> {
  let count = Math.min(want, before);
  for (let i = 0; i < TRIES && count > 0; i++) {
    const from = before - count;
    const page = await read(from, count);
    const end = page.from + page.lines.length;
    if (page.from === from && end === before) return page;
    // Short: it ended where the budget did. As many lines as fitted, from nearer.
    count = Math.min(page.lines.length, count - 1);
  }
  return null;
}
