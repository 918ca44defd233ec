/**
 * Lines cut out of an output's bytes, for a page (src/db/outputPages.ts).
 * Pure: the bytes are what the pieces read so far hold.
 */

const NEWLINE = 0x0a;

/** What `pageLines` found: the lines, and whether the bytes held enough to say so. */
export interface PageLines {
  lines: string[];
  /** False: the page needs bytes after `bytes` (its end is not the output's). */
  complete: boolean;
}

/** The byte index at or before `end` that does not split a UTF-8 character. */
function charBoundary(bytes: Uint8Array, end: number): number {
  let i = end;
  while (i > 0 && ((bytes[i] ?? 0) & 0xc0) === 0x80) i -= 1;
  return i;
}

/**
 * Lines of `bytes` from byte `start` (a line's start): at most `count`
 * lines and at most `budget` bytes of them (newlines not counted), stopping
 * before a line that would not fit. A first line longer than `budget` is
 * cut to it (on a character boundary) and ends with `…`. `atEnd`: `bytes`
 * ends where the output does (its last line may lack a newline); otherwise
 * a line running off the end is not whole yet, and the answer is not
 * `complete` unless the count or the budget was reached first.
 *
 * @example
 * ```ts
 * const b = Buffer.from('ab\ncd\nef\n')
 * pageLines(b, 3, 5, 100, true) // => { lines: ['cd', 'ef'], complete: true }
 * pageLines(b, 0, 1, 100, false) // => { lines: ['ab'], complete: true }
 * pageLines(b, 0, 5, 100, false) // => { lines: ['ab', 'cd', 'ef'], complete: false }
 * pageLines(b, 0, 5, 3, true) // => { lines: ['ab'], complete: true }
 * pageLines(Buffer.from('abcdef'), 0, 5, 4, false) // => { lines: ['abcd…'], complete: true }
 * pageLines(Buffer.from('éé'), 0, 5, 3, false).lines // => ['é…']
 * pageLines(Buffer.from('ab'), 0, 5, 100, true) // => { lines: ['ab'], complete: true }
 * ```
 */
export function pageLines(
  bytes: Uint8Array,
  start: number,
  count: number,
  budget: number,
  atEnd: boolean,
): PageLines {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const lines: string[] = [];
  let used = 0;
  let at = start;
  while (lines.length < count && at < buf.length) {
    const nl = buf.indexOf(NEWLINE, at);
    const end = nl === -1 ? buf.length : nl;
    const whole = nl !== -1 || atEnd;
    if (used + (end - at) > budget) {
      if (lines.length > 0) return { lines, complete: true };
      const cut = charBoundary(buf, at + budget);
      return { lines: [`${buf.toString('utf8', at, cut)}…`], complete: true };
    }
    if (!whole) return { lines, complete: false };
    lines.push(buf.toString('utf8', at, end));
    used += end - at;
    at = end + 1;
  }
  return { lines, complete: lines.length === count || atEnd };
}

/**
 * The index just after the `n`th newline of `bytes` (n >= 1), or -1 when it
 * holds fewer: where line `n` starts, counting from the piece's start.
 *
 * @example
 * ```ts
 * afterNewline(Buffer.from('a\nb\nc'), 2) // => 4
 * afterNewline(Buffer.from('a\nb'), 2) // => -1
 * ```
 */
export function afterNewline(bytes: Uint8Array, n: number): number {
  let at = 0;
  for (let k = 0; k < n; k++) {
    const nl = bytes.indexOf(NEWLINE, at);
    if (nl === -1) return -1;
    at = nl + 1;
  }
  return at;
}

/**
 * The first line start at or after index `from` of `bytes` (never index 0:
 * whether the bytes start a line is the caller's to know), with the
 * newlines of `bytes` before it; null when none starts before the end of
 * `bytes` (the bytes after `from` are all one line's).
 *
 * @example
 * ```ts
 * firstLineStartFrom(Buffer.from('ab\ncd\nef'), 1) // => { at: 3, newlines: 1 }
 * firstLineStartFrom(Buffer.from('ab\ncd\nef'), 4) // => { at: 6, newlines: 2 }
 * firstLineStartFrom(Buffer.from('ab\ncdef'), 4) // => null
 * firstLineStartFrom(Buffer.from('ab\n'), 0) // => null
 * ```
 */
export function firstLineStartFrom(
  bytes: Uint8Array,
  from: number,
): { at: number; newlines: number } | null {
  let newlines = 0;
  let at = 0;
  for (;;) {
    const nl = bytes.indexOf(NEWLINE, at);
    if (nl === -1) return null;
    newlines += 1;
    at = nl + 1;
    if (at >= from) return at < bytes.length ? { at, newlines } : null;
  }
}
