/**
 * One task as its job page shows it: what it runs (image, argv, the names of
 * its environment variables, never their values), and every attempt with
 * its timings, node, handle, history and why it ended; and a session's
 * stored output. The user filter is in the SQL: another user's task or
 * output is never even read (`actor` null: the admin, who reads any).
 */
import { z } from 'zod';
import type { TaskDetail } from '../board/boardPort.js';
import { positionsOf } from './dispatchReads.js';
import * as f from './inputs.js';
import { parseOrThrow } from './parseOrThrow.js';
import { toSession, toSessionEvent, toTask } from './rows.js';
import { type SessionOutput, toSessionOutput } from './sessionOutputs.js';
import type { Db } from './transaction.js';

const detailInput = z.strictObject({ actor: f.name.nullable(), taskId: f.taskId });
const outputInput = detailInput.extend({ sessionId: f.sessionId });
const iso = (d: Date | null) => (d === null ? null : d.toISOString());

/** True when `value` passes `schema`: an id of another shape names no row. */
const wellFormed = (schema: z.ZodType, value: unknown) => schema.safeParse(value).success;

/** `taskId` as `actor` may see it, or null (no such task, not theirs, or not a task id). */
export async function getTaskRecord(
  db: Db,
  input: { actor: string | null; taskId: string },
): Promise<TaskDetail | null> {
  if (!wellFormed(f.taskId, input.taskId)) return null;
  const i = parseOrThrow(detailInput, input, '');
  let taskQuery = db.selectFrom('tasks').selectAll().where('id', '=', i.taskId);
  if (i.actor !== null) taskQuery = taskQuery.where('user_id', '=', i.actor);
  const row = await taskQuery.executeTakeFirst();
  if (row === undefined) return null;
  const task = toTask(row);
  const sessions = (
    await db
      .selectFrom('sessions')
      .selectAll()
      .where('task_id', '=', task.id)
      .where('user_id', '=', task.userId)
      .orderBy('attempt')
      .execute()
  ).map(toSession);
  // Read after the sessions: a place is exact as of this read, as a card's.
  const waiting = sessions.filter((s) => s.status === 'queued').map((s) => s.id);
  const positions =
    waiting.length === 0 ? new Map<string, number | null>() : await positionsOf(db, waiting);
  const events =
    sessions.length === 0
      ? []
      : (
          await db
            .selectFrom('session_history')
            .selectAll()
            .where(
              'session_id',
              'in',
              sessions.map((s) => s.id),
            )
            .orderBy('epoch')
            .orderBy('step')
            .orderBy('id')
            .execute()
        ).map(toSessionEvent);
  return {
    taskId: task.id,
    userId: task.userId,
    title: task.title,
    image: task.spec.image,
    command: [...task.spec.command],
    envKeys: Object.keys(task.spec.env ?? {}).sort(),
    createdAt: task.createdAt.toISOString(),
    ...(typeof row.submit_key === 'string' ? { submitKey: row.submit_key } : {}),
    ...(typeof row.time_limit_ms === 'number' ? { timeLimitMs: row.time_limit_ms } : {}),
    attempts: sessions.map((s) => ({
      sessionId: s.id,
      attempt: s.attempt,
      status: s.status,
      position: s.status === 'running' ? 0 : (positions.get(s.id) ?? null),
      enqueuedAt: s.enqueuedAt.toISOString(),
      claimedAt: iso(s.claimedAt),
      startedAt: iso(s.startedAt),
      finishedAt: iso(s.finishedAt),
      exitCode: s.exitCode,
      failureReason: s.failureReason,
      node: s.owner,
      backend: s.backend,
      handle: s.handle,
      events: events
        .filter((e) => e.sessionId === s.id)
        .map((e) => ({
          from: e.from,
          to: e.to,
          reason: e.reason,
          node: e.node,
          at: e.at.toISOString(),
        })),
    })),
  };
}

/**
 * The output row of `sessionId` if it is an attempt of `taskId` that
 * `actor` may see (null: the admin): the filter every job read of an
 * output shares, before its columns are chosen.
 */
export function taskOutputRow(
  db: Db,
  i: { actor: string | null; taskId: string; sessionId: string },
) {
  const q = db
    .selectFrom('session_outputs as o')
    .innerJoin('sessions as s', 's.id', 'o.session_id')
    .where('o.session_id', '=', i.sessionId)
    .where('s.task_id', '=', i.taskId);
  return i.actor === null ? q : q.where('s.user_id', '=', i.actor);
}

/** The stored output of `sessionId`, an attempt of `taskId`, as `actor` may see it; or null. */
export async function getTaskOutput(
  db: Db,
  input: { actor: string | null; taskId: string; sessionId: string },
): Promise<SessionOutput | null> {
  if (!wellFormed(f.taskId, input.taskId) || !wellFormed(f.sessionId, input.sessionId)) return null;
  const i = parseOrThrow(outputInput, input, '');
  const row = await taskOutputRow(db, i)
    .select(['o.session_id', 'o.text', 'o.total_bytes', 'o.truncated', 'o.created_at'])
    .executeTakeFirst();
  return row === undefined ? null : toSessionOutput(row);
}
