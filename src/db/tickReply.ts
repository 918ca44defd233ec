/**
 * Lean checked parsers for the JSON rows the dispatch functions return:
 * arrays of the columns of src/db/sql/rowJson.ts (what this node asks
 * for), or `to_json` objects of sessions, tasks and user_lines rows (the
 * reply to a tick that asks for none). The node parses one
 * session and one task per job, so these are plain type checks instead of
 * the zod row schemas of rows.ts (measured in bench/suites/tick.bench.ts);
 * they check the same things that matter downstream (types, enums, finite
 * dates, integer counters, the run spec's shape) and fail the same way: a
 * `CorruptRowError` naming table, row id and field.
 */
import { CorruptRowError } from './errors.js';
import type { Session, Task, TaskSummary } from './rows.js';
import type { RunSpec } from './runSpec.js';
import type { BackendKind, SessionKind, SessionStatus } from './schema.js';
import { LINE_COLUMNS, SESSION_COLUMNS, TASK_COLUMNS } from './sql/rowJson.js';
import type { ChangedSession, StoredTail, UserLine } from './tickTypes.js';
import { limitOfPair } from './timeLimit.js';

type Row = Record<string, unknown>;

const STATUSES = new Set(['queued', 'running', 'succeeded', 'failed', 'cancelled']);
const KINDS = new Set(['run', 'bootstrap']);
const BACKENDS = new Set(['swarm', 'docker', 'local', 'simulated']);

/**
 * The time a timestamp names, parsed once for a run of the same text: a
 * tick stamps its rows with one `now()`, so a reply repeats a few texts
 * many times (~25 dates per job), and a string parse costs several times
 * `new Date(ms)`. Each field still gets a Date of its own.
 */
let lastText = '';
let lastMs = Number.NaN;
function timeOf(text: string): number {
  if (text !== lastText) {
    lastMs = new Date(text).getTime();
    lastText = text;
  }
  return lastMs;
}

/** Reads one row's fields, naming the row in every failure. */
class Fields {
  readonly id: string;
  constructor(
    readonly table: string,
    readonly row: Row,
    idField = 'id',
  ) {
    const id = row[idField];
    this.id = typeof id === 'string' ? id : '(no id)';
    if (typeof id !== 'string') this.fail(idField);
  }
  fail(field: string): never {
    throw new CorruptRowError(this.table, this.id, field);
  }
  str(k: string): string {
    const v = this.row[k];
    return typeof v === 'string' ? v : this.fail(k);
  }
  strOrNull(k: string): string | null {
    const v = this.row[k];
    return v === null ? null : typeof v === 'string' ? v : this.fail(k);
  }
  int(k: string, min = Number.MIN_SAFE_INTEGER): number {
    const v = this.row[k];
    return typeof v === 'number' && Number.isSafeInteger(v) && v >= min ? v : this.fail(k);
  }
  intOrNull(k: string): number | null {
    return this.row[k] === null ? null : this.int(k);
  }
  bool(k: string): boolean {
    const v = this.row[k];
    return typeof v === 'boolean' ? v : this.fail(k);
  }
  date(k: string): Date {
    const v = this.row[k];
    const ms = typeof v === 'string' ? timeOf(v) : Number.NaN;
    return Number.isFinite(ms) ? new Date(ms) : this.fail(k);
  }
  dateOrNull(k: string): Date | null {
    return this.row[k] === null ? null : this.date(k);
  }
  oneOf<T extends string>(k: string, set: Set<string>): T {
    const v = this.row[k];
    return typeof v === 'string' && set.has(v) ? (v as T) : this.fail(k);
  }
}

function asRow(table: string, v: unknown): Row {
  if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as Row;
  throw new CorruptRowError(table, '(no id)', '(row)');
}

/**
 * A row sent as an array of `columns` (src/db/sql/rowJson.ts), or as an
 * object: the fields by name either way. An array of another length is
 * corrupt (a column missing or one the parser does not know).
 */
function rowOf(table: string, v: unknown, columns: readonly string[]): Row {
  if (!Array.isArray(v)) return asRow(table, v);
  if (v.length !== columns.length) throw new CorruptRowError(table, '(no id)', '(row)');
  const row: Row = {};
  for (let i = 0; i < columns.length; i++) row[columns[i] as string] = v[i];
  return row;
}

/** A `sessions` row as JSON -> `Session`. */
export function sessionFromJson(v: unknown): Session {
  const r = new Fields('sessions', rowOf('sessions', v, SESSION_COLUMNS));
  return {
    id: r.id,
    taskId: r.str('task_id'),
    userId: r.str('user_id'),
    kind: r.oneOf<SessionKind>('kind', KINDS),
    status: r.oneOf<SessionStatus>('status', STATUSES),
    attempt: r.int('attempt', 1),
    enqueuedAt: r.date('enqueued_at'),
    claimedAt: r.dateOrNull('claimed_at'),
    backend: r.row.backend === null ? null : r.oneOf<BackendKind>('backend', BACKENDS),
    handle: r.strOrNull('handle'),
    owner: r.strOrNull('owner_node'),
    epoch: r.int('epoch', 0),
    startedAt: r.dateOrNull('started_at'),
    finishedAt: r.dateOrNull('finished_at'),
    exitCode: r.intOrNull('exit_code'),
    failureReason: r.strOrNull('failure_reason'),
    userRecoverable: r.bool('user_recoverable'),
    updatedAt: r.date('updated_at'),
    turn: r.row.turn === undefined ? null : r.intOrNull('turn'),
    joinSeq: r.row.join_seq === undefined ? null : r.intOrNull('join_seq'),
  };
}

function runSpec(r: Fields): RunSpec {
  const s = r.row.run_spec;
  if (typeof s !== 'object' || s === null || Array.isArray(s)) return r.fail('run_spec');
  const { image, command, env } = s as Row;
  if (typeof image !== 'string') return r.fail('run_spec.image');
  if (
    !Array.isArray(command) ||
    command.length === 0 ||
    !command.every((a) => typeof a === 'string')
  )
    return r.fail('run_spec.command');
  if (env === undefined) return { image, command: command as string[] };
  if (typeof env !== 'object' || env === null || Array.isArray(env)) return r.fail('run_spec.env');
  for (const value of Object.values(env)) if (typeof value !== 'string') r.fail('run_spec.env');
  return { image, command: command as string[], env: env as Record<string, string> };
}

/**
 * A `tasks` row as JSON -> `Task`, with the time limit sent beside it
 * (`limitOfPair`): the row's array keeps the shape older nodes check.
 */
export function taskFromJson(v: unknown, timeLimitMs: number | null): Task {
  const r = new Fields('tasks', rowOf('tasks', v, TASK_COLUMNS));
  // Spelled out, not a spread of the summary: one object per grant.
  return {
    id: r.id,
    userId: r.str('user_id'),
    title: r.str('title'),
    spec: runSpec(r),
    column: r.str('board_column'),
    createdAt: r.date('created_at'),
    updatedAt: r.date('updated_at'),
    timeLimitMs,
  };
}

/**
 * A change row's `tasks` row as JSON -> `TaskSummary`. Its `run_spec` is
 * null when the reader asked for none, and unused when an older function
 * sent it anyway, so it is not kept (nor checked: nothing reads it).
 */
export function taskSummaryFromJson(v: unknown, timeLimitMs: number | null): TaskSummary {
  return summaryOf(new Fields('tasks', rowOf('tasks', v, TASK_COLUMNS)), timeLimitMs);
}

function summaryOf(r: Fields, timeLimitMs: number | null): TaskSummary {
  return {
    id: r.id,
    userId: r.str('user_id'),
    title: r.str('title'),
    column: r.str('board_column'),
    createdAt: r.date('created_at'),
    updatedAt: r.date('updated_at'),
    timeLimitMs,
  };
}

/** A `user_lines` row as JSON -> `UserLine`. */
export function lineFromJson(v: unknown): UserLine {
  const r = new Fields('user_lines', rowOf('user_lines', v, LINE_COLUMNS), 'user_id');
  return {
    userId: r.id,
    headTurn: r.int('head_turn'),
    queued: r.int('queued', 0),
    running: r.int('running', 0),
    joinSeq: r.int('join_seq'),
    maxRunning: r.int('max_running', 0),
    hasOverride: r.bool('has_override'),
  };
}

/** `{ session, task, limitMs }` pairs (grants, owned): `limitMs`, the task's time limit, or null. */
export function pairsFromJson(
  v: unknown,
  what: string,
): { session: Session; task: Task; limitMs: number | null }[] {
  return arrayOf(v, what, (x) => {
    const row = asRow('rt_tick', x);
    const limitMs = limitOfPair(row);
    return {
      session: sessionFromJson(row.session),
      task: taskFromJson(row.task, limitMs),
      limitMs,
    };
  });
}

function storedTailFromJson(v: unknown): StoredTail | null {
  if (v === null) return null;
  const o = asRow('session_outputs', v);
  if (typeof o.t === 'string' && typeof o.w === 'boolean') return { tail: o.t, whole: o.w };
  throw new CorruptRowError('session_outputs', '(feed)', 'text');
}

/**
 * Changed sessions with their tasks (the feed's read, a tick's `changes`),
 * and the stored tail of each one that carries `output`.
 */
export function changesFromJson(v: unknown, what: string): ChangedSession[] {
  return arrayOf(v, what, (x) => {
    const row = asRow('rt_tick', x);
    const out: ChangedSession = {
      session: sessionFromJson(row.session),
      task: taskSummaryFromJson(row.task, limitOfPair(row)),
    };
    if ('output' in row) out.output = storedTailFromJson(row.output);
    return out;
  });
}

/** A list of JSON rows, or a CorruptRowError naming the reply's field. */
export function arrayOf<T>(v: unknown, what: string, parse: (x: unknown) => T): T[] {
  if (!Array.isArray(v)) throw new CorruptRowError('rt_tick', '(reply)', what);
  return v.map(parse);
}
