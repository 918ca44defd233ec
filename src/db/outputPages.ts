/**
 * A page of a finished attempt's stored output, and the whole of it in
 * pieces for a download, read from its pieces (`session_output_chunks`,
 * migration 26) rather than its text: a page costs the pieces that hold it,
 * never the whole output (up to 16 MiB; 8.4 M lines of `yes` took 0.5-1.2 s
 * a page to read and split, on PGlite the node's own thread). The user
 * filter is in the SQL, as every job read's (src/db/taskDetail.ts).
 */
import { sql } from 'kysely';
import { z } from 'zod';
import type { OutputPage } from '../board/taskDetail.js';
import { CorruptRowError } from './errors.js';
import * as f from './inputs.js';
import { OUTPUT_CHUNK_BYTES } from './outputChunkBytes.js';
import { afterNewline, firstLineStartFrom, pageLines } from './outputLines.js';
import { parseOrThrow } from './parseOrThrow.js';
import { taskOutputRow } from './taskDetail.js';
import type { Db } from './transaction.js';

/**
 * Most bytes of lines one page holds: `count` (at most 5,000 lines) bounds
 * the lines, this what they weigh (5,000 lines of 16 KiB would be 80 MiB).
 */
export const MAX_OUTPUT_PAGE_BYTES = 1024 * 1024;

/** Pieces one read of a download fetches (1 MiB): the store is held one read at a time. */
export const DOWNLOAD_PIECES_PER_READ = 32;

const outputRef = z.strictObject({
  actor: f.name.nullable(),
  taskId: f.taskId,
  sessionId: f.sessionId,
});

/** Which attempt's output, as whom (`actor` null: the admin). */
export interface OutputRef {
  actor: string | null;
  taskId: string;
  sessionId: string;
}

/** An output's row without its text. */
interface OutputHead {
  sessionId: string;
  totalBytes: number;
  truncated: boolean;
  lineCount: number;
  textBytes: number;
}

interface Piece {
  seq: number;
  linesBefore: number;
  body: Buffer;
}

const C = OUTPUT_CHUNK_BYTES;

function safeInt(value: string | number | null, table: string, row: string, column: string) {
  const n = Number(value);
  if (value === null || !Number.isSafeInteger(n)) throw new CorruptRowError(table, row, column);
  return n;
}

/** The row, indexed first if no page of it was read before (its one whole read). */
async function outputHead(db: Db, ref: OutputRef): Promise<OutputHead | null> {
  if (!outputRef.safeParse(ref).success) return null;
  const i = parseOrThrow(outputRef, ref, '');
  for (let pass = 0; pass < 2; pass++) {
    const row = await taskOutputRow(db, i)
      .select(['o.session_id', 'o.total_bytes', 'o.truncated', 'o.line_count', 'o.text_bytes'])
      .executeTakeFirst();
    if (row === undefined) return null;
    if (row.line_count !== null && row.text_bytes !== null) {
      return {
        sessionId: row.session_id,
        totalBytes: safeInt(row.total_bytes, 'session_outputs', row.session_id, 'total_bytes'),
        truncated: row.truncated,
        lineCount: safeInt(row.line_count, 'session_outputs', row.session_id, 'line_count'),
        textBytes: safeInt(row.text_bytes, 'session_outputs', row.session_id, 'text_bytes'),
      };
    }
    await sql`SELECT rt_index_output(${i.sessionId})`.execute(db);
  }
  throw new CorruptRowError('session_outputs', i.sessionId, 'line_count');
}

async function readPieces(db: Db, sessionId: string, first: number, last: number) {
  const rows = await db
    .selectFrom('session_output_chunks')
    .select(['seq', 'lines_before', 'body'])
    .where('session_id', '=', sessionId)
    .where('seq', '>=', first)
    .where('seq', '<=', last)
    .orderBy('seq')
    .execute();
  return rows.map(
    (r): Piece => ({
      seq: r.seq,
      linesBefore: safeInt(r.lines_before, 'session_output_chunks', sessionId, 'lines_before'),
      body: Buffer.from(r.body.buffer, r.body.byteOffset, r.body.byteLength),
    }),
  );
}

/** The byte where line `line` (< the line count) starts, and the piece that holds it. */
async function lineStart(db: Db, head: OutputHead, line: number): Promise<number> {
  if (line === 0) return 0;
  // The piece with the line's newline before it: the last with fewer before it.
  const holder = await db
    .selectFrom('session_output_chunks')
    .select(['seq'])
    .where('session_id', '=', head.sessionId)
    .where('lines_before', '<', line)
    .orderBy('lines_before', 'desc')
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  const [piece] =
    holder === undefined ? [] : await readPieces(db, head.sessionId, holder.seq, holder.seq);
  const at = piece === undefined ? -1 : afterNewline(piece.body, line - piece.linesBefore);
  if (piece === undefined || at === -1) {
    throw new CorruptRowError('session_output_chunks', head.sessionId, 'lines_before');
  }
  return piece.seq * C + at;
}

/**
 * Up to `count` lines from byte `start`, within `budget` bytes: the pieces
 * are read a few at a time (1, 2, 4, then 8), and never past the one that
 * holds `start + budget`.
 */
async function linesFrom(
  db: Db,
  head: OutputHead,
  start: number,
  lineCount: number,
  budget: number,
): Promise<string[]> {
  const first = Math.floor(start / C);
  const lastPiece = Math.floor((head.textBytes - 1) / C);
  const maxPiece = Math.min(lastPiece, Math.floor((start + budget) / C));
  const read: Buffer[] = [];
  let next = first;
  for (let batch = 1; ; batch = Math.min(batch * 2, 8)) {
    const upTo = Math.min(next + batch - 1, maxPiece);
    for (const p of await readPieces(db, head.sessionId, next, upTo)) read.push(p.body);
    next = upTo + 1;
    const page = pageLines(
      Buffer.concat(read),
      start - first * C,
      lineCount,
      budget,
      next > lastPiece,
    );
    if (page.complete || next > maxPiece) return page.lines;
  }
}

/** What a page is asked for: lines from `from` (0-based), or the last `count`. */
export interface OutputPageRange {
  from: number | undefined;
  count: number;
}

/**
 * Lines `from`..`from + count` of an attempt's stored output as `actor`
 * may see it; without `from`, the last `count` lines. At most `budget`
 * bytes of lines: a page may hold fewer than `count` (the next one starts
 * at `from + lines.length`), a last page keeps the lines nearest the end,
 * and a line longer than the budget is cut to it, ending with `…`. Null
 * when there is no such output. Reads the pieces the page needs.
 */
export async function readOutputPage(
  db: Db,
  ref: OutputRef,
  range: OutputPageRange,
  budget: number = MAX_OUTPUT_PAGE_BYTES,
): Promise<OutputPage | null> {
  const head = await outputHead(db, ref);
  if (head === null) return null;
  const page = (from: number, lines: string[]): OutputPage => ({
    sessionId: head.sessionId,
    from,
    lines,
    totalLines: head.lineCount,
    totalBytes: head.totalBytes,
    truncated: head.truncated,
  });
  const { from, count } = range;
  if (from !== undefined) {
    if (from >= head.lineCount) return page(from, []);
    return page(from, await linesFrom(db, head, await lineStart(db, head, from), count, budget));
  }
  if (head.lineCount === 0) return page(0, []);
  const wanted = Math.max(0, head.lineCount - count);
  const low = Math.max(0, head.textBytes - budget);
  const start = await lineStart(db, head, wanted);
  if (start >= low) return page(wanted, await linesFrom(db, head, start, count, budget));
  // The last `count` lines weigh more than a page: the lines that start in
  // its last `budget` bytes, or the last line cut if it alone is longer.
  const first = Math.floor(low / C);
  const pieces = await readPieces(db, head.sessionId, first, Math.floor((head.textBytes - 1) / C));
  const bytes = Buffer.concat(pieces.map((p) => p.body));
  const hit = firstLineStartFrom(bytes, low - first * C);
  if (hit === null) {
    const last = head.lineCount - 1;
    return page(last, await linesFrom(db, head, await lineStart(db, head, last), 1, budget));
  }
  const linesBefore = pieces[0]?.linesBefore ?? 0;
  return page(linesBefore + hit.newlines, pageLines(bytes, hit.at, count, budget, true).lines);
}

/**
 * The whole stored output as `actor` may see it, in its bytes of UTF-8, one
 * read of `piecesPerRead` pieces at a time (so a download never holds the
 * store, nor the thread, for the whole output); null when there is none.
 */
export async function readOutputPieces(
  db: Db,
  ref: OutputRef,
  piecesPerRead: number = DOWNLOAD_PIECES_PER_READ,
): Promise<AsyncIterable<Buffer> | null> {
  const head = await outputHead(db, ref);
  if (head === null) return null;
  const pieceCount = Math.ceil(head.textBytes / C);
  return (async function* () {
    for (let next = 0; next < pieceCount; next += piecesPerRead) {
      const pieces = await readPieces(db, head.sessionId, next, next + piecesPerRead - 1);
      if (pieces.length === 0) {
        throw new CorruptRowError('session_output_chunks', head.sessionId, 'seq');
      }
      yield Buffer.concat(pieces.map((p) => p.body));
    }
  })();
}
