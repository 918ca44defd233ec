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
import { type Session, type Task, toSession, toTask } from './rows.js';
import { type Db, inTransaction } from './transaction.js';

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

/** Creates a task and its queued session (attempt 1) with the creation event, in one transaction. */
export async function createTaskWithSession(
  db: Db,
  input: CreateTaskInput,
): Promise<{ task: Task; session: Session }> {
  const i = parseOrThrow(createInput, input, '');
  return inTransaction(db, async (tx) => {
    const taskRow = await tx
      .insertInto('tasks')
      .values({
        id: newId('task'),
        user_id: i.userId,
        title: i.title,
        run_spec: JSON.stringify(i.spec),
        board_column: i.column ?? DEFAULT_COLUMN,
        created_at: i.now,
        updated_at: i.now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    const sessionRow = await tx
      .insertInto('sessions')
      .values({
        id: newId('session'),
        task_id: taskRow.id,
        user_id: i.userId,
        kind: i.kind ?? 'run',
        status: 'queued',
        attempt: 1,
        enqueued_at: i.now,
        updated_at: i.now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await tx
      .insertInto('session_events')
      .values({
        session_id: sessionRow.id,
        from_status: null,
        to_status: 'queued',
        reason: 'created',
        node: null,
        epoch: 0,
        at: i.now,
      })
      .execute();
    return { task: toTask(taskRow), session: toSession(sessionRow) };
  });
}

/** Most tasks one `createTasksWithSessions` call accepts (one statement's parameter budget). */
export const MAX_BATCH = 1000;

/**
 * Creates many tasks with their queued sessions and creation events in one
 * transaction, three multi-row INSERTs in all: for bulk imports and the
 * benchmark's batched enqueue. Every input is validated before anything is
 * written; the first bad one names its index, e.g. `inputs.3.title`.
 */
export async function createTasksWithSessions(
  db: Db,
  inputs: readonly CreateTaskInput[],
): Promise<{ task: Task; session: Session }[]> {
  const all = parseOrThrow(z.array(createInput).max(MAX_BATCH), inputs, 'inputs');
  if (all.length === 0) return [];
  const ids = all.map(() => ({ task: newId('task'), session: newId('session') }));
  return inTransaction(db, async (tx) => {
    const tasks = await tx
      .insertInto('tasks')
      .values(
        all.map((i, n) => ({
          id: ids[n]!.task,
          user_id: i.userId,
          title: i.title,
          run_spec: JSON.stringify(i.spec),
          board_column: i.column ?? DEFAULT_COLUMN,
          created_at: i.now,
          updated_at: i.now,
        })),
      )
      .returningAll()
      .execute();
    const sessions = await tx
      .insertInto('sessions')
      .values(
        all.map((i, n) => ({
          id: ids[n]!.session,
          task_id: ids[n]!.task,
          user_id: i.userId,
          kind: i.kind ?? 'run',
          status: 'queued',
          attempt: 1,
          enqueued_at: i.now,
          updated_at: i.now,
        })),
      )
      .returningAll()
      .execute();
    await tx
      .insertInto('session_events')
      .values(
        all.map((i, n) => ({
          session_id: ids[n]!.session,
          from_status: null,
          to_status: 'queued',
          reason: 'created',
          node: null,
          epoch: 0,
          at: i.now,
        })),
      )
      .execute();
    const taskById = new Map(tasks.map((t) => [t.id, toTask(t)]));
    const sessionById = new Map(sessions.map((r) => [r.id, toSession(r)]));
    return ids.map(({ task, session }) => ({
      task: taskById.get(task)!,
      session: sessionById.get(session)!,
    }));
  });
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
