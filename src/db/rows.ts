/**
 * Rows as the rest of roundtable sees them (camelCase, narrow types), and the
 * readers that turn driver rows into them. Every row is validated on the way
 * out: a row damaged by hand or by an old bug fails here with a typed
 * `CorruptRowError`, not three layers later as `undefined is not a function`.
 */
import type { Selectable } from 'kysely';
import { z } from 'zod';
import { MAX_TIME_LIMIT_MS, MIN_TIME_LIMIT_MS } from '../board/timeLimit.js';
import { CorruptRowError } from './errors.js';
import { type RunSpec, runSpecSchema } from './runSpec.js';
import type {
  BackendKind,
  SessionEventsTable,
  SessionKind,
  SessionStatus,
  SessionsTable,
  TasksTable,
} from './schema.js';

/** A card on the board. */
export interface Task {
  id: string;
  userId: string;
  title: string;
  spec: RunSpec;
  column: string;
  createdAt: Date;
  updatedAt: Date;
  /** Migration 24: how long each run may hold a runner, in ms; null for no limit. */
  timeLimitMs: number | null;
}

/**
 * A task without its run spec: what a change row carries (the feed's read,
 * a tick's `changes`), and all the board needs of a task. Only a runner
 * needs the spec, and it gets the whole task with its grant.
 */
export type TaskSummary = Omit<Task, 'spec'>;

/** One attempt to run a task. */
export interface Session {
  id: string;
  taskId: string;
  userId: string;
  kind: SessionKind;
  status: SessionStatus;
  attempt: number;
  enqueuedAt: Date;
  claimedAt: Date | null;
  backend: BackendKind | null;
  handle: string | null;
  owner: string | null;
  epoch: number;
  /** When the exec started; the adopt policy compares it with the container's start. */
  startedAt: Date | null;
  finishedAt: Date | null;
  exitCode: number | null;
  failureReason: string | null;
  userRecoverable: boolean;
  updatedAt: Date;
  /** Migration 4: its turn in its user's line while queued (kept after), null if never placed by a tick. */
  turn: number | null;
  /** Migration 4: its user's join number when it was placed. */
  joinSeq: number | null;
}

/** One status change in a session's history. `from` is null for its creation. */
export interface SessionEvent {
  id: string;
  sessionId: string;
  from: SessionStatus | null;
  to: SessionStatus;
  reason: string | null;
  node: string | null;
  epoch: number;
  at: Date;
  /**
   * The tick that made it (null: a write outside ticks), and its place in
   * that tick (`session_history.phase`): ticks are serial, so sorting a
   * store's events by (tick, phase) gives the order the database decided in.
   */
  tick: number | null;
  phase: number | null;
}

const date = z.date().refine((d) => Number.isFinite(d.getTime()), 'invalid date');
const status = z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled']);
const int = z.number().int();
/** int8 columns come back from pg as strings; absent in rows selected before migration 4. */
const bigintOrNull = z
  .union([
    z
      .string()
      .regex(/^-?\d{1,16}$/)
      .transform(Number),
    z.number().int(),
  ])
  .nullable()
  .optional()
  .transform((v) => v ?? null);

const taskRow = z.object({
  id: z.string(),
  user_id: z.string(),
  title: z.string(),
  run_spec: runSpecSchema,
  board_column: z.string(),
  created_at: date,
  updated_at: date,
  time_limit_ms: int.min(MIN_TIME_LIMIT_MS).max(MAX_TIME_LIMIT_MS).nullable(),
});

/** A task row without its run spec: what the board reads (`toTaskSummary`). */
const taskSummaryRow = taskRow.omit({ run_spec: true });

const sessionRow = z.object({
  id: z.string(),
  task_id: z.string(),
  user_id: z.string(),
  kind: z.enum(['run', 'bootstrap']),
  status,
  attempt: int.min(1),
  enqueued_at: date,
  claimed_at: date.nullable(),
  backend: z.enum(['swarm', 'docker', 'local', 'simulated']).nullable(),
  handle: z.string().nullable(),
  owner_node: z.string().nullable(),
  epoch: int.min(0),
  started_at: date.nullable(),
  finished_at: date.nullable(),
  exit_code: int.nullable(),
  failure_reason: z.string().nullable(),
  user_recoverable: z.boolean(),
  updated_at: date,
  turn: bigintOrNull,
  join_seq: bigintOrNull,
});

const eventRow = z.object({
  id: z.string(),
  session_id: z.string(),
  from_status: status.nullable(),
  to_status: status,
  reason: z.string().nullable(),
  node: z.string().nullable(),
  epoch: int,
  at: date,
  tick: bigintOrNull,
  phase: int.nullable().optional(),
});

function check<S extends z.ZodType>(schema: S, table: string, row: unknown): z.output<S> {
  const result = schema.safeParse(row);
  if (result.success) return result.data;
  const id = typeof row === 'object' && row !== null && 'id' in row ? String(row.id) : '(no id)';
  const field = result.error.issues[0]?.path.map(String).join('.') || '(row)';
  throw new CorruptRowError(table, id, field, { cause: result.error });
}

/** Validates a `tasks` row and maps it to a `Task`. */
export function toTask(row: Selectable<TasksTable> | unknown): Task {
  const r = check(taskRow, 'tasks', row);
  return { ...summaryOf(r), spec: r.run_spec };
}

/**
 * Validates a `tasks` row read without `run_spec` (the board's reads) and
 * maps it to a `TaskSummary`.
 */
export function toTaskSummary(row: unknown): TaskSummary {
  return summaryOf(check(taskSummaryRow, 'tasks', row));
}

function summaryOf(r: z.output<typeof taskSummaryRow>): TaskSummary {
  return {
    id: r.id,
    userId: r.user_id,
    title: r.title,
    column: r.board_column,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    timeLimitMs: r.time_limit_ms,
  };
}

/** Validates a `sessions` row and maps it to a `Session`. */
export function toSession(row: Selectable<SessionsTable> | unknown): Session {
  const r = check(sessionRow, 'sessions', row);
  return {
    id: r.id,
    taskId: r.task_id,
    userId: r.user_id,
    kind: r.kind,
    status: r.status,
    attempt: r.attempt,
    enqueuedAt: r.enqueued_at,
    claimedAt: r.claimed_at,
    backend: r.backend,
    handle: r.handle,
    owner: r.owner_node,
    epoch: r.epoch,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    exitCode: r.exit_code,
    failureReason: r.failure_reason,
    userRecoverable: r.user_recoverable,
    updatedAt: r.updated_at,
    turn: r.turn,
    joinSeq: r.join_seq,
  };
}

/** Validates a `session_events` row and maps it to a `SessionEvent`. */
const sessionStateRow = z.object({ id: z.string(), epoch: int.min(0), status });

/** A session's id, epoch and status, checked as it is read back (a node's sweep of its runs). */
export function toSessionState(row: unknown): { id: string; epoch: number; status: SessionStatus } {
  return check(sessionStateRow, 'sessions', row);
}

export function toSessionEvent(row: Selectable<SessionEventsTable> | unknown): SessionEvent {
  const r = check(eventRow, 'session_events', row);
  return {
    id: r.id,
    sessionId: r.session_id,
    from: r.from_status,
    to: r.to_status,
    reason: r.reason,
    node: r.node,
    epoch: r.epoch,
    at: r.at,
    tick: r.tick,
    phase: r.phase ?? null,
  };
}
