/**
 * Reads over the dispatch state, off the lock. Every order-changing write is
 * a tick (atomic, serialized), so one statement's snapshot sees a prefix of
 * the tick sequence: each read here is one statement, and so exact as of
 * some tick. Plus the Reconciler's drift repair, which takes the lock.
 */
import { sql } from 'kysely';
import { z } from 'zod';
import { CorruptRowError, ValidationError } from './errors.js';
import * as f from './inputs.js';
import { parseOrThrow } from './parseOrThrow.js';
import { changedLines, changedSessions } from './sql/changesSql.js';
import { lineJson } from './sql/rowJson.js';
import { ACTIVE_LINES, positionOf } from './sql/rtPlace.js';
import { arrayOf, changesFromJson, lineFromJson } from './tickReply.js';
import type { ChangedSession, UserLine } from './tickTypes.js';
import type { Db } from './transaction.js';

function tickOf(v: unknown): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0) throw new CorruptRowError('dispatch_state', 'id', 'tick');
  return n;
}

/** The last tick that changed anything (dispatch_state.tick). */
export async function currentTick(db: Db): Promise<number> {
  // No row yet (a truncated store): nothing has happened.
  const { rows } = await sql<{ tick: string }>`SELECT tick FROM dispatch_state`.execute(db);
  return tickOf(rows[0]?.tick ?? 0);
}

/** The caps a tick last wrote (dispatch_state). */
export interface EnforcedCaps {
  globalCap: number;
  defaultUserCap: number;
}

/** The owner of a tick the CLI sends when no node answers for its store (src/cli/rowsTick.ts). */
export const CLI_TICK_OWNER = 'cli';

/**
 * The caps in force: those the last tick that changed anything applied
 * (every granting tick applies its own first, so these are what the grants
 * obey when the nodes are configured alike). Null until a node has ticked:
 * tick 0 holds the migration's placeholders, and the CLI's own ticks on a
 * store no node has run on write the CLI's settings, which no node set.
 */
export async function readEnforcedCaps(db: Db): Promise<EnforcedCaps | null> {
  const { rows } = await sql<{
    tick: string;
    global_cap: unknown;
    default_user_cap: unknown;
    by_node: boolean;
  }>`
    SELECT s.tick, s.global_cap, s.default_user_cap,
      EXISTS (SELECT 1 FROM dispatch_ticks k WHERE k.owner <> ${CLI_TICK_OWNER}) AS by_node
    FROM dispatch_state s`.execute(db);
  const row = rows[0];
  if (row === undefined || tickOf(row.tick) === 0 || row.by_node !== true) return null;
  return {
    globalCap: capOf(row.global_cap, 'global_cap'),
    defaultUserCap: capOf(row.default_user_cap, 'default_user_cap'),
  };
}

function capOf(n: unknown, column: string): number {
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
    throw new CorruptRowError('dispatch_state', 'id', column);
  }
  return n;
}

/** What changed after a tick: the board's feed (NOTIFY says when, this says what). */
export interface DispatchChanges {
  /** The tick this read is exact as of; pass it as `sinceTick` next time. */
  tick: number;
  /**
   * The latest attempt of every task a tick after `sinceTick` touched, with
   * its task. With `tailChars`, a finished attempt also carries the end of
   * its stored output (`null`: it stored none), so a board that did not run
   * it needs no second read for it.
   */
  sessions: ChangedSession[];
  /** Lines a tick after `sinceTick` changed, emptied ones included. */
  lines: UserLine[];
  /** Sessions running over every node (dispatch_state.running) as of `tick`. */
  running: number;
}

/**
 * Everything ticks after `sinceTick` changed, in one snapshot: the sessions
 * through the latest of their `queued_tick`, `claimed_tick`, `ended_tick`
 * (every status change a tick makes sets one; indexed), the lines through
 * `user_lines.tick`. With `skipTicks` (ticks whose replies the caller
 * applied: its own), a session whose latest change is in one of them is
 * left out; its lines are not (they are few, and exact as of the read).
 */
export async function readChanges(
  db: Db,
  since: number,
  options: { tailChars?: number; skipTicks?: readonly number[] } = {},
): Promise<DispatchChanges> {
  const s = parseOrThrow(f.tickNumber, since, 'sinceTick');
  const n =
    options.tailChars === undefined
      ? null
      : parseOrThrow(f.tailChars, options.tailChars, 'tailChars');
  const skip =
    options.skipTicks === undefined || options.skipTicks.length === 0
      ? null
      : parseOrThrow(f.skipTicks, options.skipTicks, 'skipTicks');
  // A finished attempt's stored tail rides along: the same snapshot, and no
  // read per feed batch for the outputs of runs another node finished. The
  // numbers are validated integers, so they go in as literals (the fragment
  // is shared with the tick's reply, where they are plpgsql variables).
  const sessions = changedSessions(
    `${s}::bigint`,
    null,
    n === null ? null : `${n}::integer`,
    'true',
    skip === null ? null : `'{${skip.join(',')}}'::bigint[]`,
    'false',
  );
  const { rows } = await sql<{ tick: string; running: number; sessions: unknown; lines: unknown }>`
    SELECT coalesce((SELECT tick FROM dispatch_state), 0) AS tick,
      coalesce((SELECT running FROM dispatch_state), 0) AS running,
      ${sql.raw(sessions)} AS sessions,
      ${sql.raw(changedLines(`${s}::bigint`, 'true'))} AS lines`.execute(db);
  const row = rows[0];
  return {
    tick: tickOf(row?.tick),
    sessions: changesFromJson(row?.sessions, 'sessions'),
    lines: arrayOf(row?.lines, 'lines', lineFromJson),
    running: tickOf(row?.running),
  };
}

/**
 * Exact positions, read-only: 0 for a running session, the 1-based place in
 * the global order for a queued one (O(active users) each, through the
 * contiguous turns), null for a finished, unknown or untracked session
 * (one written outside ticks and not yet repaired).
 */
export async function positionsOf(
  db: Db,
  sessionIds: readonly string[],
): Promise<Map<string, number | null>> {
  const ids = sessionIds.map((id, n) => parseOrThrow(f.sessionId, id, `sessionIds.${n}`));
  const out = new Map<string, number | null>(ids.map((id) => [id, null]));
  if (ids.length === 0) return out;
  const { rows } = await sql<{ id: string; status: string; turn: string | null; position: string }>`
    WITH ${sql.raw(ACTIVE_LINES)}
    SELECT s.id, s.status, s.turn, ${sql.raw(positionOf('s'))} AS position
    FROM sessions s LEFT JOIN act ON act.head_turn <= s.turn
    WHERE s.id = ANY (${ids}::text[]) GROUP BY s.id`.execute(db);
  for (const r of rows) {
    out.set(r.id, r.status === 'running' ? 0 : r.status === 'queued' ? nullableInt(r) : null);
  }
  return out;
}

function nullableInt(r: { id: string; turn: string | null; position: string }): number | null {
  // Written outside a tick and not yet repaired: it has no place in the order.
  if (r.turn === null) return null;
  const n = Number(r.position);
  if (!Number.isSafeInteger(n) || n < 1) throw new CorruptRowError('sessions', r.id, 'turn');
  return n;
}

/** Every line with queued or running work: what the board's positions start from. */
export async function readLines(db: Db): Promise<UserLine[]> {
  const { rows } = await sql<{ lines: unknown }>`
    SELECT coalesce(jsonb_agg(${sql.raw(lineJson('l', 'true', 'jsonb'))}
      ORDER BY l.head_turn, l.join_seq, l.user_id), '[]') AS lines
    FROM user_lines l WHERE l.queued > 0 OR l.running > 0`.execute(db);
  return arrayOf(rows[0]?.lines, 'lines', lineFromJson);
}

/** What `repairDispatch` fixed. All empty and `running` null: nothing had drifted. */
export interface RepairResult {
  /** dispatch_state.tick after the repair (moved on only when something was fixed). */
  tick: number;
  /** Users whose queued turns were renumbered (not contiguous, or untracked sessions). */
  renumbered: string[];
  /** Users whose line counts, head, join number or cap were corrected. */
  lines: string[];
  /** The global running count, when it was wrong. */
  running: { from: number; to: number } | null;
}

const repairReply = z.strictObject({
  tick: z.number().int().min(0),
  renumbered: z.array(z.string()),
  lines: z.array(z.string()),
  running: z.strictObject({ from: z.number().int(), to: z.number().int() }).nullable(),
});

/**
 * Recomputes the dispatch counters and turns from the rows, under the
 * tick's lock (`rt_repair`): the Reconciler calls it every pass, so drift
 * from any write outside ticks is repaired within one pass.
 */
export async function repairDispatchReport(db: Db): Promise<RepairResult> {
  const { rows } = await sql<{ r: unknown }>`SELECT rt_repair() AS r`.execute(db);
  const parsed = repairReply.safeParse(rows[0]?.r);
  if (!parsed.success) throw new CorruptRowError('rt_repair', '(reply)', '(reply)');
  return parsed.data;
}

/**
 * `repairDispatchReport` as one line per fix, for the Reconciler's pass
 * report: `renumbered <user>`, `line <user>`, `running <from> -> <to>`.
 * Empty: nothing had drifted.
 */
export async function repairDispatch(db: Db): Promise<string[]> {
  const r = await repairDispatchReport(db);
  return [
    ...r.renumbered.map((u) => `renumbered ${u}`),
    ...r.lines.map((u) => `line ${u}`),
    ...(r.running === null ? [] : [`running ${r.running.from} -> ${r.running.to}`]),
  ];
}

/**
 * Vacuums and analyzes the tables every tick rewrites: `user_lines` and
 * `dispatch_state` (one row per user; milliseconds) and `sessions` (two
 * non-HOT updates per job). PGlite never autovacuums (a server may have it
 * off), and without it the dead versions pile up and ticks slow down with
 * history: 3,000 ticks of 20 jobs on the server with autovacuum off went 9
 * -> 36 ms; with this every 250 ticks they stayed at 10-13 ms (each call
 * 200-470 ms there, scaling with the pages changed since the last). The
 * analyze also refreshes the statistics the tick's cached plans are made
 * from. The Reconciler calls it every pass. Not inside a transaction
 * (VACUUM cannot run in one).
 */
export async function vacuumDispatch(db: Db): Promise<void> {
  if (db.isTransaction) throw new ValidationError('db', 'VACUUM cannot run inside a transaction');
  await sql`VACUUM (ANALYZE) user_lines, dispatch_state, sessions`.execute(db);
}
