/**
 * Well-formed UTF-16: no lone surrogate. A JavaScript string may hold one
 * (`'\ud800'`, from JSON's `\ud800` escape or a cut emoji) but no store
 * can: Postgres refuses it in json (SQLSTATE 22P02, "Unicode low surrogate
 * must follow a high surrogate") and UTF-8 cannot encode it. Every string a
 * caller sends towards the rows is checked with this, so it is refused as
 * that caller's input, naming its field, instead of failing a tick.
 */

/** What a refusal says. */
export const ILL_FORMED = 'lone UTF-16 surrogate: not well-formed Unicode';

/** `String.prototype.isWellFormed` and `toWellFormed` (Node 20); the project's lib (ES2023) does not declare them yet. */
interface WellFormedCheck {
  isWellFormed(): boolean;
  toWellFormed(): string;
}

/**
 * True when `text` has no lone surrogate (a pair, one character beyond
 * U+FFFF, is well-formed).
 *
 * @example
 * ```ts
 * isWellFormed('naïve 🙂') // => true
 * isWellFormed('') // => true
 * isWellFormed('\ud800 lone') // => false
 * isWellFormed('\udc00') // => false
 * isWellFormed('🙂'.slice(0, 1)) // => false
 * ```
 */
export function isWellFormed(text: string): boolean {
  return (text as string & WellFormedCheck).isWellFormed();
}

/**
 * `text` with each lone surrogate replaced by U+FFFD, as UTF-8 encoding
 * replaces it: for text no caller chose (a run's output), which is kept,
 * not refused.
 *
 * @example
 * ```ts
 * toWellFormed('naïve 🙂') // => 'naïve 🙂'
 * toWellFormed('a\ud800b') // => 'a\uFFFDb'
 * toWellFormed('🙂'.slice(1)) // => '\uFFFD'
 * ```
 */
export function toWellFormed(text: string): string {
  return (text as string & WellFormedCheck).toWellFormed();
}

/**
 * The first `max` UTF-16 units of `text`, one fewer when the cut would
 * split a surrogate pair: a cut emoji is a lone surrogate no store takes.
 *
 * @example
 * ```ts
 * cutWellFormed('abc', 2) // => 'ab'
 * cutWellFormed('a🙂', 2) // => 'a'
 * cutWellFormed('a🙂', 3) // => 'a🙂'
 * cutWellFormed('', 5) // => ''
 * ```
 */
export function cutWellFormed(text: string, max: number): string {
  const cut = text.slice(0, max);
  const last = cut.charCodeAt(cut.length - 1);
  return last >= 0xd800 && last <= 0xdbff && cut.length < text.length ? cut.slice(0, -1) : cut;
}

/**
 * `text` with each NUL as U+FFFD: a Postgres text column cannot hold NUL.
 * The same object when it has none.
 *
 * @example
 * ```ts
 * withoutNul('a\u0000b') // => 'a\uFFFDb'
 * withoutNul('plain') // => 'plain'
 * ```
 */
export function withoutNul(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
}

/**
 * `text` as a row can hold it, for text no caller chose (a run's output):
 * lone surrogates (json refuses them) and NUL (text refuses it) as U+FFFD.
 *
 * @example
 * ```ts
 * storableText('ok 🙂') // => 'ok 🙂'
 * storableText('a\u0000b\ud83d') // => 'a\uFFFDb\uFFFD'
 * ```
 */
export function storableText(text: string): string {
  return withoutNul(isWellFormed(text) ? text : toWellFormed(text));
}
