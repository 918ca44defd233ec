/**
 * A finished run's output, kept on a row (`session_outputs`) so it outlives
 * every process (DESIGN.md: rows outlive processes; a run's output is kept
 * whole up to a documented limit, and a cut is marked, never silent).
 *
 * The limit is `SESSION_OUTPUT_LIMIT_BYTES` (16 MiB of UTF-8, the backends'
 * own cap): a longer output keeps its tail (where a failure explains
 * itself), behind a marker line that says how much was kept of how much, and
 * `truncated` is set. An output the backend already cut is marked the same
 * way. The row is written in the same transaction as the finish, so a
 * finished session never lacks its output and a deposed owner's late finish
 * (a `StaleStatusError`) writes neither.
 */
import { z } from 'zod';
import { storableText } from '../common/wellFormed.js';
import { CorruptRowError } from './errors.js';
import * as f from './inputs.js';
import { parseOrThrow } from './parseOrThrow.js';
import type { Session } from './rows.js';
import { type FinishInput, finish } from './sessionTransitions.js';
import { storedTail } from './storedTail.js';
import { type Db, inTransaction } from './transaction.js';

/** Most bytes of `text` a row holds, marker included (the backends cap at the same). */
export const SESSION_OUTPUT_LIMIT_BYTES = 16 * 1024 * 1024;

/** A run's output as the backend read it (`RunOutput` of src/containers). */
export interface RunOutputInput {
  text: string;
  /** Size of the whole output the run wrote, in bytes. */
  totalBytes: number;
  /** True when the backend already dropped the head. */
  truncated: boolean;
}

/** A stored output. */
export interface SessionOutput {
  sessionId: string;
  /** At most `SESSION_OUTPUT_LIMIT_BYTES`; starts with a marker line when cut. */
  text: string;
  /** Size of the whole output the run wrote. */
  totalBytes: number;
  /** True when `text` holds less than the whole output. */
  truncated: boolean;
  createdAt: Date;
}

/** The line put in front of a cut output. */
export function cutMarker(keptBytes: number, totalBytes: number): string {
  return `[roundtable: output cut: the last ${keptBytes} of ${totalBytes} bytes are kept]\n`;
}

const utf8 = (s: string) => Buffer.byteLength(s, 'utf8');

/**
 * Fits an output into `limit` bytes: NUL characters (which Postgres text
 * cannot hold) and lone UTF-16 surrogates (which its json refuses, failing
 * the finish's tick: a backend of an application's own that cut an emoji
 * in half) become U+FFFD; if it is too long, or the backend already cut
 * it, the tail is kept behind a marker line, cut on a character boundary.
 * Pure.
 *
 * @example
 * ```ts
 * fitOutput({ text: 'hello\n', totalBytes: 6, truncated: false }, 100) // => { text: 'hello\n', truncated: false }
 * fitOutput({ text: 'a\u0000b', totalBytes: 3, truncated: false }, 100) // => { text: 'a\uFFFDb', truncated: false }
 * fitOutput({ text: 'cut \ud83d', totalBytes: 8, truncated: false }, 100) // => { text: 'cut \uFFFD', truncated: false }
 * fitOutput({ text: 'tail\n', totalBytes: 900, truncated: true }, 100) // => { text: '[roundtable: output cut: the last 5 of 900 bytes are kept]\ntail\n', truncated: true }
 * fitOutput({ text: 'x'.repeat(200), totalBytes: 200, truncated: false }, 80).text // => '[roundtable: output cut: the last 20 of 200 bytes are kept]\n' + 'x'.repeat(20)
 * Buffer.byteLength(fitOutput({ text: 'é'.repeat(100), totalBytes: 200, truncated: false }, 80).text) <= 80 // => true
 * ```
 */
export function fitOutput(
  output: RunOutputInput,
  limit: number = SESSION_OUTPUT_LIMIT_BYTES,
): { text: string; truncated: boolean } {
  const text = storableText(output.text);
  const bytes = utf8(text);
  if (!output.truncated && bytes <= limit) return { text, truncated: false };
  const total = Math.max(output.totalBytes, bytes);
  // The marker's own length depends on the number it prints: measure it with
  // the longest that number can be, then cut the text to what is left.
  const room = Math.max(0, limit - utf8(cutMarker(Math.min(bytes, limit), total)));
  let kept = text;
  if (bytes > room) {
    const buf = Buffer.from(text, 'utf8');
    let start = buf.length - room;
    // Never start inside a character: skip UTF-8 continuation bytes.
    while (start < buf.length && ((buf[start] ?? 0) & 0xc0) === 0x80) start += 1;
    kept = buf.subarray(start).toString('utf8');
  }
  return { text: cutMarker(utf8(kept), total) + kept, truncated: true };
}

/**
 * The size of the whole output the run wrote, as stored (`total_bytes`):
 * the backend's count of the bytes (`totalBytes`). Its text is decoded
 * from those bytes, so it is no measure of them: each invalid byte (a lone
 * 0xff, a multi-byte character the run cut off) is one U+FFFD of three
 * bytes, and taking the text's length in UTF-8 as a floor stored 17 for
 * the 14 bytes `printf 'a\000b\377c\n\342\202\254ok\n\342\202'`
 * wrote. The floor kept against a backend that counts short is what the
 * text proves was written: a U+FFFD counts one byte, and an output the
 * backend cut (its text starts with the backend's own marker line) has
 * only the backend's count.
 *
 * @example
 * ```ts
 * writtenBytes({ text: 'a\uFFFDb\n', totalBytes: 4, truncated: false }) // => 4
 * writtenBytes({ text: 'a\u0000b', totalBytes: 3, truncated: false }) // => 3
 * writtenBytes({ text: '€ok\n', totalBytes: 0, truncated: false }) // => 6
 * writtenBytes({ text: '\uFFFD\uFFFD', totalBytes: 0, truncated: false }) // => 2
 * writtenBytes({ text: '[roundtable: output cut, first 1 of 6 bytes dropped]\nhello', totalBytes: 6, truncated: true }) // => 6
 * ```
 */
export function writtenBytes(output: RunOutputInput): number {
  if (output.truncated) return output.totalBytes;
  let replaced = 0;
  for (let i = output.text.indexOf('\uFFFD'); i !== -1; i = output.text.indexOf('\uFFFD', i + 1))
    replaced += 1;
  return Math.max(output.totalBytes, utf8(output.text) - 2 * replaced);
}

const outputInput = z.strictObject({
  text: z.string(),
  totalBytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  truncated: z.boolean(),
});

/**
 * `finish` and the output row in one transaction: the same compare-and-set
 * (a stale epoch writes neither), then the output, fitted to the limit.
 */
export async function finishWithOutput(
  db: Db,
  input: FinishInput,
  output: RunOutputInput,
): Promise<Session> {
  const o = parseOrThrow(outputInput, output, 'output');
  const fitted = fitOutput(o);
  return inTransaction(db, async (tx) => {
    const session = await finish(tx, input);
    await tx
      .insertInto('session_outputs')
      .values({
        session_id: session.id,
        text: fitted.text,
        total_bytes: writtenBytes(o),
        truncated: fitted.truncated,
        created_at: session.finishedAt ?? session.updatedAt,
        ...storedTail(fitted.text),
      })
      .execute();
    return session;
  });
}

const getInput = z.strictObject({ userId: f.name, sessionId: f.sessionId });

/**
 * The stored output of one of `userId`'s sessions; `null` when there is none
 * (not finished, a give-up or cancel that read no output, or not this user's
 * session: the user filter is in the SQL, so another user's output is never
 * even read).
 */
export async function getSessionOutput(
  db: Db,
  input: { userId: string; sessionId: string },
): Promise<SessionOutput | null> {
  const i = parseOrThrow(getInput, input, '');
  const row = await db
    .selectFrom('session_outputs as o')
    .innerJoin('sessions as s', 's.id', 'o.session_id')
    .select(['o.session_id', 'o.text', 'o.total_bytes', 'o.truncated', 'o.created_at'])
    .where('o.session_id', '=', i.sessionId)
    .where('s.user_id', '=', i.userId)
    .executeTakeFirst();
  return row === undefined ? null : toSessionOutput(row);
}

/** A `session_outputs` row read back, its byte count checked. */
export function toSessionOutput(row: {
  session_id: string;
  text: string;
  total_bytes: string | number;
  truncated: boolean;
  created_at: Date;
}): SessionOutput {
  const totalBytes = Number(row.total_bytes);
  if (!Number.isSafeInteger(totalBytes)) {
    throw new CorruptRowError('session_outputs', row.session_id, 'total_bytes');
  }
  return {
    sessionId: row.session_id,
    text: row.text,
    totalBytes,
    truncated: row.truncated,
    createdAt: row.created_at,
  };
}
