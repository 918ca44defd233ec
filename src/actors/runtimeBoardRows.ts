/**
 * The board's reads of the store: one task's card rows, every card at boot
 * (three statements however many tasks), and the tails of stored outputs
 * for finished cards this boot did not run. Only the board index
 * (src/actors/runtimeBoard.ts) calls them.
 */
import { sql } from 'kysely';
import { type Db, outputTailSql, type Session, type TaskSummary } from '../db/index.js';
import { toSession, toTaskSummary } from '../db/rows.js';
import { CARD_LINE_CHARS, CARD_OUTPUT_LINES } from './runtimeBoardCard.js';

/** Characters of a stored output the board reads back: enough for its last lines. */
export const RESTORE_TAIL_CHARS = CARD_OUTPUT_LINES * (CARD_LINE_CHARS + 1) * 4;

/** A finished card's tail, from the output's stored end (migration 22), never its whole text. */
const TAIL = outputTailSql('session_outputs', String(RESTORE_TAIL_CHARS));

/** Sessions whose stored output one statement reads (a statement takes at most 65,535 parameters). */
export const TAIL_READ_IDS = 5_000;

/**
 * The last `n` lines of a tail read from a stored output. The tail's first
 * line is dropped when it may be the end of a longer line (the tail did not
 * start the output), unless it is all there is. Pure.
 *
 * @example
 * ```ts
 * lastLines('a\nb\nc\n', 2, true) // => ['b', 'c']
 * lastLines('a\nb\nc', 5, true) // => ['a', 'b', 'c']
 * lastLines('…rt of a\nb', 5, false) // => ['b']
 * lastLines('one long line', 5, false) // => ['one long line']
 * lastLines('', 5, true) // => []
 * ```
 */
export function lastLines(tail: string, n: number, whole: boolean): string[] {
  const lines = tail.split('\n');
  if (lines.at(-1) === '') lines.pop();
  if (!whole && lines.length > 1) lines.shift();
  return lines.slice(-n);
}

/**
 * The `tasks` columns a card needs: all but `run_spec`, which only a runner
 * reads and which can be ~1 MB (docs/data.md): a boot's load read and
 * checked every task's (bench/results/changes.md, "board load").
 */
const CARD_TASK_COLUMNS = [
  'id',
  'user_id',
  'title',
  'board_column',
  'created_at',
  'updated_at',
  'time_limit_ms',
] as const;

/** A task and its latest attempt, or undefined when either is missing. */
export async function readCardRows(
  db: Db,
  taskId: string,
): Promise<{ task: TaskSummary; session: Session } | undefined> {
  const taskRow = await db
    .selectFrom('tasks')
    .select(CARD_TASK_COLUMNS)
    .where('id', '=', taskId)
    .executeTakeFirst();
  const sessionRow = await db
    .selectFrom('sessions')
    .selectAll()
    .where('task_id', '=', taskId)
    .orderBy('attempt', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (taskRow === undefined || sessionRow === undefined) return undefined;
  return { task: toTaskSummary(taskRow), session: toSession(sessionRow) };
}

/** Every card's rows, and why each later attempt's predecessor ended. */
export interface AllCardRows {
  tasks: TaskSummary[];
  /** Task id -> its latest attempt. */
  latest: Map<string, Session>;
  /** Task id -> the attempt before the latest and why it ended (tasks that ran more than once). */
  previous: Map<string, { attempt: number; reason: string }>;
}

/**
 * The tasks a board keeps when work that ended before `endedSince` (epoch
 * ms) is past retention: the complement of what the prune deletes
 * (src/db/pruneFinished.ts), so a boot before the prune has caught up
 * (an upgrade over a long history, a shorter retention) reads none of it.
 */
const keptTasks = (endedSince: number) => {
  const at = new Date(endedSince);
  return sql<string>`(SELECT t.id FROM tasks t
    WHERE t.created_at >= ${at} OR EXISTS (
      SELECT 1 FROM sessions s WHERE s.task_id = t.id
        AND (s.status IN ('queued', 'running') OR coalesce(s.finished_at, s.updated_at) >= ${at})))`;
};

/** Every task as its card needs it (those a board keeps, with `endedSince`). */
export async function readCardTasks(db: Db, endedSince?: number): Promise<TaskSummary[]> {
  let q = db.selectFrom('tasks').select(CARD_TASK_COLUMNS);
  if (endedSince !== undefined) q = q.where('id', 'in', keptTasks(endedSince));
  return (await q.execute()).map(toTaskSummary);
}

/** Every card's rows; with `endedSince`, only the tasks whose work did not end before it. */
export async function readAllCardRows(db: Db, endedSince?: number): Promise<AllCardRows> {
  const tasks = await readCardTasks(db, endedSince);
  // The latest attempt of every task, in one query.
  let latestQuery = db
    .selectFrom('sessions')
    .selectAll()
    .distinctOn('task_id')
    .orderBy('task_id')
    .orderBy('attempt', 'desc');
  if (endedSince !== undefined)
    latestQuery = latestQuery.where('task_id', 'in', keptTasks(endedSince));
  const sessions = (await latestQuery.execute()).map(toSession);
  // Why each later attempt's predecessor ended, in one more query (only
  // tasks that ran more than once).
  const before = await sql<{ task_id: string; attempt: number; why: string }>`
    SELECT DISTINCT ON (p.task_id) p.task_id, p.attempt, coalesce(p.failure_reason, p.status) AS why
    FROM sessions p
    WHERE p.task_id IN (SELECT task_id FROM sessions WHERE attempt > 1)
      AND p.attempt < (SELECT max(m.attempt) FROM sessions m WHERE m.task_id = p.task_id)
    ORDER BY p.task_id, p.attempt DESC`.execute(db);
  return {
    tasks,
    latest: new Map(sessions.map((s) => [s.taskId, s])),
    previous: new Map(
      before.rows.map((r) => [r.task_id, { attempt: Number(r.attempt), reason: r.why }]),
    ),
  };
}

/** The last RESTORE_TAIL_CHARS of each session's stored output, and whether that is all of it. */
export async function readOutputTails(
  db: Db,
  sessionIds: readonly string[],
): Promise<Array<{ sessionId: string; tail: string; whole: boolean }>> {
  const out: Array<{ sessionId: string; tail: string; whole: boolean }> = [];
  // In slices, each id a parameter: a statement takes at most 65,535 of
  // them, and a boot over more finished tasks than that failed here.
  for (let i = 0; i < sessionIds.length; i += TAIL_READ_IDS) {
    const rows = await db
      .selectFrom('session_outputs')
      .select([
        'session_id',
        sql<string>`${sql.raw(TAIL.tail)}`.as('tail'),
        sql<boolean>`${sql.raw(TAIL.whole)}`.as('whole'),
      ])
      .where('session_id', 'in', sessionIds.slice(i, i + TAIL_READ_IDS))
      .execute();
    for (const r of rows) out.push({ sessionId: r.session_id, tail: r.tail, whole: r.whole });
  }
  return out;
}
