/**
 * The last lines of a run's output, as a board card shows them, kept in work
 * linear in the bytes received and memory bounded by the limits, whatever the
 * output looks like (one 20 MB line, or a million empty ones).
 *
 * Three choices make that so:
 * - only the new chunk is scanned for newlines, never the line so far, and
 *   only as far back from its end as the last `lines` lines reach: a chunk's
 *   earlier lines can never be shown, so they are never copied;
 * - a line keeps its first characters (the card's cut, `capLine`): the
 *   unfinished last line (`partial`) holds at most `chars + 1` of them, one
 *   more than a card shows, which is how a line that fits is told from one
 *   that is cut, and a complete line is cut as it completes;
 * - whatever is kept is a copy (`detach`): V8 represents a slice of a string
 *   as a view of the whole, so 500 characters sliced from a 20 MB chunk would
 *   otherwise keep the 20 MB alive as long as the card.
 *
 * When the run ends, `endOutput` turns the partial line into the last line,
 * so nothing of a finished run is still growing: the kept size is at most
 * `lines × chars` characters per card.
 *
 * Pure: no I/O, no clock; every function returns a new value.
 */

/** What a card keeps of an output: its last complete lines and the line still growing. */
export interface OutputTail {
  /** The last complete lines, each already cut to the limit, oldest first. */
  readonly lines: readonly string[];
  /** The unfinished last line: its first `chars + 1` characters at most. */
  readonly partial: string;
}

export interface OutputLimits {
  /** Most lines kept (a card's 20). */
  readonly lines: number;
  /** Most characters of a line shown, the cut mark included (a card's 500). */
  readonly chars: number;
}

/** No output yet. */
export const EMPTY_OUTPUT: OutputTail = { lines: [], partial: '' };

/** The mark that ends a cut line, in place of its last kept character. */
export const CUT_MARK = '…';

/**
 * A line as a card shows it: whole if it fits in `chars`, else its first
 * `chars - 1` characters and `CUT_MARK` (the start of a line says what it
 * is; a long line's end is usually more of the same).
 *
 * @example
 * ```ts
 * capLine('short', 5) // => 'short'
 * capLine('longer', 5) // => 'long…'
 * capLine('', 5) // => ''
 * ```
 */
export function capLine(line: string, chars: number): string {
  return line.length <= chars ? line : `${line.slice(0, chars - 1)}${CUT_MARK}`;
}

/**
 * A flat copy of a short string, holding no reference to the string it was
 * sliced or joined from. A JSON round trip is the one portable way to force
 * V8 to copy; it costs the length of the copy, which is bounded by the
 * limits, so it keeps the whole linear.
 */
const detach = (s: string): string =>
  s.length < 13 ? s : (JSON.parse(JSON.stringify(s)) as string);

/** `head` and as much of `chunk[from, to)` as makes `size` characters: reads no more of it. */
const headOf = (head: string, chunk: string, from: number, to: number, size: number): string => {
  const room = size - head.length;
  return room > 0 && from < to ? head + chunk.slice(from, Math.min(to, from + room)) : head;
};

/** A complete line, cut and copied: reads at most `chars + 1` characters of the chunk. */
const lineOf = (head: string, chunk: string, from: number, to: number, chars: number): string =>
  detach(capLine(headOf(head, chunk, from, to, chars + 1), chars));

/** The last `n` of `lines` (all of them when there are fewer; none for 0). */
const lastOf = (lines: readonly string[], n: number): readonly string[] =>
  lines.length <= n ? lines : lines.slice(lines.length - n);

function checkLimits(limits: OutputLimits): void {
  if (!Number.isInteger(limits.lines) || limits.lines < 0)
    throw new RangeError(`outputTail: limits.lines must be an integer ≥ 0, got ${limits.lines}`);
  if (!Number.isInteger(limits.chars) || limits.chars < 1)
    throw new RangeError(`outputTail: limits.chars must be an integer ≥ 1, got ${limits.chars}`);
}

/**
 * Adds a chunk of output (any split: a chunk may end mid-line, or hold many
 * lines). Work is O(chunk + lines × chars), whatever came before; the result
 * equals splitting the whole output so far at once and keeping its last
 * `lines` lines, each cut by `capLine`, and its unfinished line's head.
 *
 * @example
 * ```ts
 * const limits = { lines: 2, chars: 5 };
 * pushOutput(EMPTY_OUTPUT, 'one\ntw', limits) // => { lines: ['one'], partial: 'tw' }
 * pushOutput(pushOutput(EMPTY_OUTPUT, 'one\ntw', limits), 'o\n', limits) // => { lines: ['one', 'two'], partial: '' }
 * pushOutput(EMPTY_OUTPUT, 'a\nb\nc\nd', limits) // => { lines: ['b', 'c'], partial: 'd' }
 * pushOutput(EMPTY_OUTPUT, 'a very long line', limits) // => { lines: [], partial: 'a very' }
 * pushOutput(pushOutput(EMPTY_OUTPUT, 'a very long', limits), ' line\n', limits) // => { lines: ['a ve…'], partial: '' }
 * pushOutput(EMPTY_OUTPUT, 'x', { lines: 2, chars: 0 }) // throws RangeError
 * ```
 */
export function pushOutput(tail: OutputTail, chunk: string, limits: OutputLimits): OutputTail {
  checkLimits(limits);
  const keep = limits.chars + 1;
  const first = chunk.indexOf('\n');
  if (first === -1) {
    // Still the same line: only its head is kept, so once full it stays as is.
    if (chunk === '' || tail.partial.length >= keep) return tail;
    return {
      lines: tail.lines,
      partial: detach(headOf(tail.partial, chunk, 0, chunk.length, keep)),
    };
  }
  // Newlines from the end, oldest first: up to `lines + 1` of them, since the
  // oldest line shown starts after a newline; or down to the first one, when
  // the line so far completes within the lines shown.
  const cuts: number[] = [];
  for (let at = chunk.lastIndexOf('\n'); cuts.length <= limits.lines; ) {
    cuts.push(at);
    if (at === first) break;
    at = chunk.lastIndexOf('\n', at - 1);
  }
  cuts.reverse();
  const fresh: string[] = [];
  if (cuts[0] === first && cuts.length <= limits.lines)
    fresh.push(lineOf(tail.partial, chunk, 0, first, limits.chars));
  for (let i = 1; i < cuts.length; i++)
    fresh.push(lineOf('', chunk, (cuts[i - 1] ?? 0) + 1, cuts[i] ?? 0, limits.chars));
  const last = cuts.at(-1) ?? first;
  return {
    lines: lastOf(
      [...lastOf(tail.lines, Math.max(0, limits.lines - fresh.length)), ...fresh],
      limits.lines,
    ),
    partial: detach(headOf('', chunk, last + 1, chunk.length, keep)),
  };
}

/**
 * The run ended: its unfinished line is its last line (cut like any other),
 * and nothing is left growing. What a card shows does not change.
 *
 * @example
 * ```ts
 * const limits = { lines: 2, chars: 5 };
 * endOutput({ lines: ['a', 'b'], partial: 'c' }, limits) // => { lines: ['b', 'c'], partial: '' }
 * endOutput({ lines: ['a'], partial: 'abcdef' }, limits) // => { lines: ['a', 'abcd…'], partial: '' }
 * endOutput({ lines: ['a'], partial: '' }, limits) // => { lines: ['a'], partial: '' }
 * endOutput(EMPTY_OUTPUT, limits) // => { lines: [], partial: '' }
 * ```
 */
export function endOutput(tail: OutputTail, limits: OutputLimits): OutputTail {
  checkLimits(limits);
  if (tail.partial === '') return { lines: lastOf(tail.lines, limits.lines), partial: '' };
  const last = detach(capLine(tail.partial, limits.chars));
  return { lines: lastOf([...tail.lines, last], limits.lines), partial: '' };
}
