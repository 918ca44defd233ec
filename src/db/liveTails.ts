/**
 * The live end of a running session's output, shared between nodes
 * (migration 27, `live_tails`). A run's output streams to the node that
 * runs it; the board of every other node used to show a running card with
 * the output it last had (none, for a run it never held) until the run
 * ended. Behind a load balancer most page loads land on another node, so
 * the node that runs a session now writes the lines its card shows, at most
 * every `liveOutputMs`, only when they changed and only while another
 * boot's board is watched (`node_heartbeats.watching`, the flag full ticks'
 * NOTIFYs go by), and the other nodes' boards read the ones newer than what
 * they show (src/actors/liveTailShare.ts).
 *
 * A row is written only while its session is running under the writer at
 * the epoch it names (the statement joins the session's row), so a node
 * fenced out by an adoption cannot put its tail over the adopter's, and a
 * later epoch's row is never replaced by an earlier one. `seq` (one
 * sequence for every row) is how a reader asks for changes: it names each
 * running session it shows with the `seq` it has, and gets back only the
 * rows past it, by key, so no write is missed however the writes commit.
 * A writer deletes its own rows when their runs end; a row left by a node
 * that died is read by nobody (its session is no longer running at that
 * epoch) and goes with its session when retention prunes it
 * (src/db/pruneFinished.ts; a node of an older version leaves it, unread).
 */
import { sql } from 'kysely';
import { z } from 'zod';
import { storableText } from '../common/wellFormed.js';
import * as f from './inputs.js';
import { parseOrThrow } from './parseOrThrow.js';
import type { Db } from './transaction.js';

/** Most lines a tail carries: a card's 20, its unfinished last line among them. */
export const LIVE_TAIL_LINES = 20;
/** Longest line a tail carries (a card's cut, src/actors/runtimeBoardCard.ts). */
export const LIVE_TAIL_LINE_CHARS = 500;
/** Most tails one statement writes or reads; callers send more in several. */
export const LIVE_TAILS_PER_STATEMENT = 500;

const { sessionId, epoch } = f;
const line = z.string().max(LIVE_TAIL_LINE_CHARS);
const lines = z.array(line).max(LIVE_TAIL_LINES);
const owner = f.bootOwner;

const writeInput = z.strictObject({
  owner,
  tails: z.array(z.strictObject({ sessionId, epoch, lines })).max(LIVE_TAILS_PER_STATEMENT),
  ended: z.array(sessionId).max(LIVE_TAILS_PER_STATEMENT),
});
export type LiveTailsWrite = z.input<typeof writeInput>;

const known = z
  .array(
    z.strictObject({
      sessionId,
      epoch,
      seq: z.number().int().min(0),
    }),
  )
  .max(LIVE_TAILS_PER_STATEMENT);
export type KnownTail = z.input<typeof known>[number];

const tailRow = z.object({
  session_id: sessionId,
  epoch,
  seq: z.coerce.number().int().min(1),
  lines,
});

/** A session's shared tail as read back. */
export interface LiveTail {
  sessionId: string;
  epoch: number;
  seq: number;
  lines: string[];
}

/** What a write did. */
export interface LiveTailsWritten {
  /** The ids written: not a session that is not running under the owner at that epoch (ended, adopted). */
  written: string[];
  /**
   * Whether another boot's board is watched (`node_heartbeats.watching`):
   * when none is, no tail is written (nobody would read it) and the caller
   * keeps them for its next write.
   */
  watched: boolean;
}

/**
 * Writes this owner's tails of sessions it runs, while another boot's board
 * is watched, and deletes its rows of sessions that ended.
 */
export async function writeLiveTails(db: Db, input: LiveTailsWrite): Promise<LiveTailsWritten> {
  const i = parseOrThrow(writeInput, input, '');
  const tails = i.tails.map((t) => ({
    session_id: t.sessionId,
    epoch: t.epoch,
    lines: t.lines.map(storableText),
  }));
  // The watched flag is read in the statement: no round trip of its own.
  const r = await sql<{ session_id: string | null; watched: boolean }>`
    WITH watched AS MATERIALIZED (
      SELECT EXISTS (
        SELECT 1 FROM node_heartbeats WHERE watching AND owner <> ${i.owner}
      ) AS yes
    ), t AS (
      SELECT * FROM jsonb_to_recordset(${JSON.stringify(tails)}::jsonb)
        AS t(session_id text, epoch integer, lines jsonb)
    ), w AS (
      INSERT INTO live_tails AS l (session_id, owner, epoch, lines, seq, written_at)
      SELECT t.session_id, ${i.owner}, t.epoch, t.lines, nextval('live_tail_seq'), now()
      FROM t JOIN sessions s
        ON s.id = t.session_id AND s.status = 'running'
        AND s.owner_node = ${i.owner} AND s.epoch = t.epoch
      WHERE (SELECT yes FROM watched)
      ON CONFLICT (session_id) DO UPDATE
        SET owner = excluded.owner, epoch = excluded.epoch, lines = excluded.lines,
            seq = excluded.seq, written_at = excluded.written_at
        WHERE l.epoch <= excluded.epoch
      RETURNING l.session_id
    ), d AS (
      DELETE FROM live_tails
      WHERE session_id = ANY(${i.ended}::text[]) AND owner = ${i.owner}
      RETURNING 1
    )
    SELECT w.session_id, (SELECT yes FROM watched) AS watched
    FROM (SELECT 1) one LEFT JOIN w ON true`.execute(db);
  const written = r.rows.flatMap((row) => (row.session_id === null ? [] : [row.session_id]));
  return { written, watched: r.rows[0]?.watched === true };
}

/**
 * The tails of `sessions` newer than the `seq` the caller has of each, at
 * the epoch it shows (0: it has none yet).
 */
export async function readLiveTails(db: Db, sessions: readonly KnownTail[]): Promise<LiveTail[]> {
  const k = parseOrThrow(known, sessions, 'sessions');
  if (k.length === 0) return [];
  const wanted = k.map((s) => ({ session_id: s.sessionId, epoch: s.epoch, seq: s.seq }));
  const r = await sql<Record<string, unknown>>`
    SELECT l.session_id, l.epoch, l.seq, l.lines
    FROM jsonb_to_recordset(${JSON.stringify(wanted)}::jsonb)
      AS k(session_id text, epoch integer, seq bigint)
    JOIN live_tails l ON l.session_id = k.session_id AND l.epoch = k.epoch AND l.seq > k.seq`.execute(
    db,
  );
  return r.rows.map((row) => {
    const t = parseOrThrow(tailRow, row, 'live_tails');
    return { sessionId: t.session_id, epoch: t.epoch, seq: t.seq, lines: t.lines };
  });
}
