/**
 * Tasks, the cards on the board. Creating one enqueues its first session in
 * the same transaction: a task the user sees is never without its attempt.
 * Reads a user can trigger take the user id and filter by it in SQL.
 */
import { z } from 'zod';
import { NotFoundError } from './errors.js';
import { newId } from './ids.js';
import * as f from './inputs.js';
import { parseOrThrow } from './parseOrThrow.js';
import { type Session, type Task, toTask } from './rows.js';
import type { Db } from './transaction.js';

/** The column a new card lands in unless the caller says otherwise. */
export const DEFAULT_COLUMN = 'backlog';

const createInput = z.strictObject({
  userId: f.name,
  title: f.title,
  spec: f.spec,
  column: f.column.optional(),
  kind: f.kind.optional(),
  now: f.now,
});
export type CreateTaskInput = z.input<typeof createInput>;

/** Creates a task and its queued session (attempt 1) with the creation event, atomically. */
export async function createTaskWithSession(
  db: Db,
  input: CreateTaskInput,
): Promise<{ task: Task; session: Session }> {
  const created = await insertTasks(db, [parseOrThrow(createInput, input, '')]);
  return created[0]!; // insertTasks returns one pair per input, in order
}

/** Most tasks one `createTasksWithSessions` call accepts (one statement's parameter budget). */
export const MAX_BATCH = 1000;

/**
 * Creates many tasks with their queued sessions and creation events in one
 * statement: for bulk imports and the benchmark's batched enqueue. Every
 * input is validated before anything is written; the first bad one names its
 * index, e.g. `inputs.3.title`.
 */
export async function createTasksWithSessions(
  db: Db,
  inputs: readonly CreateTaskInput[],
): Promise<{ task: Task; session: Session }[]> {
  const all = parseOrThrow(z.array(createInput).max(MAX_BATCH), inputs, 'inputs');
  return all.length === 0 ? [] : insertTasks(db, all);
}

/**
 * One statement, three inserts chained as CTEs: atomic without BEGIN and
 * COMMIT round trips (the foreign keys are checked at the statement's end,
 * when the rows of every CTE exist). The rows returned are built from the
 * validated input rather than read back, which would cost another pass.
 */
async function insertTasks(
  db: Db,
  all: readonly z.output<typeof createInput>[],
): Promise<{ task: Task; session: Session }[]> {
  const created = all.map((i) => {
    const task: Task = {
      id: newId('task'),
      userId: i.userId,
      title: i.title,
      spec: i.spec,
      column: i.column ?? DEFAULT_COLUMN,
      createdAt: i.now,
      updatedAt: i.now,
      // Tasks queued here carry none: a limit comes with a tick's enqueue.
      timeLimitMs: null,
    };
    const session: Session = {
      id: newId('session'),
      taskId: task.id,
      userId: i.userId,
      kind: i.kind ?? 'run',
      status: 'queued',
      attempt: 1,
      enqueuedAt: i.now,
      claimedAt: null,
      backend: null,
      handle: null,
      owner: null,
      epoch: 0,
      startedAt: null,
      finishedAt: null,
      exitCode: null,
      failureReason: null,
      userRecoverable: false,
      updatedAt: i.now,
      // Written outside a tick: no turn until rt_repair places it.
      turn: null,
      joinSeq: null,
    };
    return { task, session };
  });
  await db
    .with('t', (q) =>
      q.insertInto('tasks').values(
        created.map(({ task: t }) => ({
          id: t.id,
          user_id: t.userId,
          title: t.title,
          run_spec: JSON.stringify(t.spec),
          board_column: t.column,
          created_at: t.createdAt,
          updated_at: t.updatedAt,
        })),
      ),
    )
    .with('s', (q) =>
      q.insertInto('sessions').values(
        created.map(({ session: s }) => ({
          id: s.id,
          task_id: s.taskId,
          user_id: s.userId,
          kind: s.kind,
          status: s.status,
          attempt: s.attempt,
          enqueued_at: s.enqueuedAt,
          updated_at: s.updatedAt,
        })),
      ),
    )
    .insertInto('session_events')
    .values(
      created.map(({ session: s }) => ({
        session_id: s.id,
        from_status: null,
        to_status: 'queued',
        reason: 'created',
        node: null,
        epoch: 0,
        at: s.enqueuedAt,
      })),
    )
    .execute();
  return created;
}

/** A task by id, for internal callers (pool, runners). Throws `NotFoundError`. */
export async function getTask(db: Db, taskId: string): Promise<Task> {
  const id = parseOrThrow(f.taskId, taskId, 'taskId');
  const row = await db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirst();
  if (row === undefined) throw new NotFoundError('task', id);
  return toTask(row);
}

/** A task by id if it belongs to `userId`; another user's task is simply not found. */
export async function getTaskForUser(db: Db, userId: string, taskId: string): Promise<Task> {
  const user = parseOrThrow(f.name, userId, 'userId');
  const id = parseOrThrow(f.taskId, taskId, 'taskId');
  const row = await db
    .selectFrom('tasks')
    .selectAll()
    .where('id', '=', id)
    .where('user_id', '=', user)
    .executeTakeFirst();
  if (row === undefined) throw new NotFoundError('task', id);
  return toTask(row);
}

/** A user's tasks, oldest first. */
export async function listTasksForUser(
  db: Db,
  userId: string,
  options: { limit?: number } = {},
): Promise<Task[]> {
  const user = parseOrThrow(f.name, userId, 'userId');
  const limit = parseOrThrow(z.number().int().min(1).max(10_000), options.limit ?? 1000, 'limit');
  const rows = await db
    .selectFrom('tasks')
    .selectAll()
    .where('user_id', '=', user)
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map(toTask);
}

const moveInput = z.strictObject({
  userId: f.name,
  taskId: f.taskId,
  column: f.column,
  now: f.now,
});
export type UpdateTaskColumnInput = z.input<typeof moveInput>;

/** Moves a user's card to another board column. Throws `NotFoundError` for another user's task. */
export async function updateTaskColumn(db: Db, input: UpdateTaskColumnInput): Promise<Task> {
  const i = parseOrThrow(moveInput, input, '');
  const row = await db
    .updateTable('tasks')
    .set({ board_column: i.column, updated_at: i.now })
    .where('id', '=', i.taskId)
    .where('user_id', '=', i.userId)
    .returningAll()
    .executeTakeFirst();
  if (row === undefined) throw new NotFoundError('task', i.taskId);
  return toTask(row);
}
