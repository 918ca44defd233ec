/**
 * The stored end of a run's output (migration 22): how much of it is kept
 * beside the text, and the SQL every reader of a tail uses (a tick's change
 * rows, the feed's read, the board's restore).
 */

/**
 * Characters of an output's end stored beside it (`tail`, migration 22):
 * the most any reader of a tail asks for (the board's RESTORE_TAIL_CHARS,
 * src/actors/runtimeBoardRows.ts). A reader that took the end of `text`
 * itself read and decompressed the whole output, up to 16 MiB, for every
 * change row of a finished run, some of them inside the tick's lock.
 */
export const OUTPUT_TAIL_CHARS = 40_080;

/**
 * The `tail` and `tail_whole` columns of an output: its last
 * OUTPUT_TAIL_CHARS characters (code points, as Postgres counts them) and
 * whether that is all of it. Walks back from the end: no copy of the text.
 *
 * @example
 * ```ts
 * storedTail('hello') // => { tail: 'hello', tail_whole: true }
 * storedTail('x'.repeat(OUTPUT_TAIL_CHARS + 1)).tail_whole // => false
 * storedTail('x'.repeat(OUTPUT_TAIL_CHARS + 1)).tail.length // => OUTPUT_TAIL_CHARS
 * storedTail('🙂'.repeat(OUTPUT_TAIL_CHARS)).tail_whole // => true
 * ```
 */
export function storedTail(text: string): { tail: string; tail_whole: boolean } {
  let i = text.length;
  for (let k = 0; i > 0 && k < OUTPUT_TAIL_CHARS; k++) {
    const low = text.charCodeAt(i - 1);
    const pair =
      low >= 0xdc00 && low <= 0xdfff && i >= 2 && (text.charCodeAt(i - 2) & 0xfc00) === 0xd800;
    i -= pair ? 2 : 1;
  }
  return { tail: text.slice(i), tail_whole: i === 0 };
}

/**
 * The SQL of a tail of at most `chars` (an SQL integer expression) of the
 * output row `o`, as `{ tail, whole }` columns' expressions: from its stored
 * tail, or from its text for a row written before migration 22.
 */
export function outputTailSql(o: string, chars: string): { tail: string; whole: string } {
  return {
    tail: `right(coalesce(${o}.tail, ${o}.text), ${chars})`,
    whole: `CASE WHEN ${o}.tail IS NULL THEN length(${o}.text) <= ${chars}
      ELSE ${o}.tail_whole AND length(${o}.tail) <= ${chars} END`,
  };
}
