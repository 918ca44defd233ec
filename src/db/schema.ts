/**
 * The Kysely view of the tables created by `migrations.ts`. Column types say
 * what the driver hands back; JSON and enum-like columns are read as wide
 * types on purpose, because `rows.ts` validates every row before use.
 */
import type { ColumnType, Generated } from 'kysely';

/** Session status. Terminal: succeeded, failed, cancelled. */
export type SessionStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

export const SESSION_STATUSES: readonly SessionStatus[] = [
  'queued',
  'running',
  'succeeded',
  'failed',
  'cancelled',
];

/** What a session is for; a bootstrap prepares a workspace and is cheap to redo. */
export type SessionKind = 'run' | 'bootstrap';

/** Where a run lives (matches `BackendKind` in src/machines/recoveryPolicy.ts). */
export type BackendKind = 'swarm' | 'docker' | 'local' | 'simulated';

type Timestamp = ColumnType<Date, Date, Date>;
type NullableTimestamp = ColumnType<Date | null, Date | null | undefined, Date | null>;
/** int8: pg hands it back as a string; optional on insert (the pre-tick writers leave it null). */
type NullableBigint = ColumnType<string | null, number | null | undefined, number | null>;
type Bigint = ColumnType<string, number, number>;

export interface TasksTable {
  id: string;
  user_id: string;
  title: string;
  /** jsonb; written as a JSON string, read back as parsed JSON. */
  run_spec: ColumnType<unknown, string, string>;
  board_column: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** The submitter's idempotency key (migration 23), unique per user; null: none given. */
  submit_key: ColumnType<string | null, string | null | undefined, string | null>;
  /** How long a run of the task may hold its runner (migration 24); null: no limit. */
  time_limit_ms: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface SessionsTable {
  id: string;
  task_id: string;
  user_id: string;
  kind: string;
  status: string;
  attempt: number;
  enqueued_at: Timestamp;
  claimed_at: NullableTimestamp;
  backend: string | null;
  handle: string | null;
  owner_node: string | null;
  epoch: ColumnType<number, number | undefined, number>;
  /** When the exec started (what the adopt policy compares with the container's start). */
  started_at: NullableTimestamp;
  finished_at: NullableTimestamp;
  exit_code: number | null;
  failure_reason: string | null;
  user_recoverable: ColumnType<boolean, boolean | undefined, boolean>;
  updated_at: Timestamp;
  /** Migration 4: the queued session's turn in its user's line (bigint, read as a string). */
  turn: NullableBigint;
  /** Migration 4: its user's join number when it was queued. */
  join_seq: NullableBigint;
  /** Migration 7: the ticks that queued, claimed and ended it (null outside ticks). */
  queued_tick: NullableBigint;
  claimed_tick: NullableBigint;
  ended_tick: NullableBigint;
  /** Migration 7: why a tick queued it, when not 'created' (`requeued after <id>`, `retry of <id>`). */
  queued_reason: ColumnType<string | null, string | null | undefined, string | null>;
  /** Migration 7: a tick's cancel reason. */
  cancel_reason: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface SessionEventsTable {
  /** bigint identity; pg returns int8 as a string. */
  id: Generated<string>;
  session_id: string;
  from_status: string | null;
  to_status: string;
  reason: string | null;
  node: string | null;
  epoch: number;
  at: Timestamp;
  /** Migration 4: the tick that wrote it; null for writes outside ticks. */
  tick: NullableBigint;
}

export interface UserCapsTable {
  user_id: string;
  max_running: number;
  updated_at: Timestamp;
}

export interface NodeHeartbeatsTable {
  owner: string;
  node_id: string;
  started_at: Timestamp;
  beat_at: Timestamp;
  /** The boot held its boot lock at its last beat (migration 6). */
  boot_lock: Generated<boolean>;
  /** Someone watches this boot's board: full ticks notify it (migration 12). */
  watching: Generated<boolean>;
  /** How long the boot's beat vouches for it, in ms (migration 19); null: an older node's row. */
  stale_after_ms: number | null;
}

export interface SessionOutputsTable {
  session_id: string;
  text: string;
  /** bigint; pg returns int8 as a string. */
  total_bytes: ColumnType<string | number, number, number>;
  truncated: boolean;
  created_at: Timestamp;
  /**
   * The last OUTPUT_TAIL_CHARS characters of `text`, and whether that is all
   * of it (migration 22): what the board reads. Null in rows written before.
   */
  tail: ColumnType<string | null, string | null | undefined, string | null>;
  tail_whole: ColumnType<boolean | null, boolean | null | undefined, boolean | null>;
  /**
   * Lines of `text` and its size in bytes of UTF-8, written by the insert's
   * trigger (migration 26) with its pieces; null in rows written before
   * until a page of them is first read.
   */
  line_count: ColumnType<number | null, never, never>;
  text_bytes: ColumnType<number | null, never, never>;
}

/** Migration 26: an output's bytes in pieces, each with the newlines before it. */
export interface SessionOutputChunksTable {
  session_id: string;
  seq: number;
  /** bigint; pg returns int8 as a string. */
  lines_before: ColumnType<string | number, never, never>;
  body: ColumnType<Uint8Array, never, never>;
}

/** Migration 4: one user's line in the dispatch order (docs/data.md, Dispatch). */
export interface UserLinesTable {
  user_id: string;
  head_turn: Bigint;
  queued: number;
  running: number;
  join_seq: Bigint;
  max_running: number;
  has_override: boolean;
  tick: Bigint;
  /** Generated: queued > 0 AND running < max_running. */
  eligible: ColumnType<boolean, never, never>;
}

/** Migration 4: the one row of cluster-wide dispatch state. */
export interface DispatchStateTable {
  id: ColumnType<boolean, boolean | undefined, boolean>;
  running: number;
  global_cap: number;
  default_user_cap: number;
  tick: Bigint;
  next_join_seq: Bigint;
}

/** Migration 7: one row per tick that changed anything. */
export interface DispatchTicksTable {
  tick: Bigint;
  owner: string;
  at: Timestamp;
}

/**
 * Migration 7's view: every session's history, the `session_events` rows
 * and the transitions derived from ticked session rows. Read-only.
 */
export interface SessionHistoryView extends Omit<SessionEventsTable, 'id'> {
  /** An event row's number, or `<session>/queued|claimed|ended` for a derived one. */
  id: string;
  user_id: string;
  /** Order within a session: by (epoch, step). */
  step: number;
  /** Order within a tick: by (tick, phase). */
  phase: number;
}

export interface SchemaMigrationsTable {
  version: number;
  name: string;
  applied_at: Timestamp;
}

/** Every table of the store. */
export interface Database {
  tasks: TasksTable;
  sessions: SessionsTable;
  session_events: SessionEventsTable;
  user_caps: UserCapsTable;
  node_heartbeats: NodeHeartbeatsTable;
  session_outputs: SessionOutputsTable;
  session_output_chunks: SessionOutputChunksTable;
  user_lines: UserLinesTable;
  dispatch_state: DispatchStateTable;
  dispatch_ticks: DispatchTicksTable;
  session_history: SessionHistoryView;
  schema_migrations: SchemaMigrationsTable;
}
