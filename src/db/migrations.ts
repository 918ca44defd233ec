/**
 * Schema migrations: a static, versioned list (no folder scanning, so a
 * bundle cannot ship without them) applied by `migrate(db)` in one
 * transaction under an advisory lock. Nodes that start together queue on the
 * lock; whoever comes second finds nothing left to do. Postgres DDL is
 * transactional, so a failed migration leaves no half-made schema.
 */
import { type Kysely, sql } from 'kysely';
import { ADVISORY_LOCKS, LOCK_NAMESPACE } from './advisoryLocks.js';
import { MigrationError } from './errors.js';
import { LIVE_TAIL_LINES } from './liveTails.js';
import type { Database } from './schema.js';
import { DERIVED_HISTORY, orReplace } from './sql/derivedHistory.js';
import { DISPATCH_SCHEMA } from './sql/dispatchSchema.js';
import { LEAN_HOT_PATH } from './sql/leanHotPath.js';
import { OUTPUT_CHUNKS_SCHEMA } from './sql/outputChunks.js';
import { RT_PLACE, RT_STATE_ROW } from './sql/rtPlace.js';
import { RT_REPAIR } from './sql/rtRepair.js';
import { RT_TICK } from './sql/rtTick.js';
import { MAX_TIME_LIMIT_MS, MIN_TIME_LIMIT_MS } from './timeLimit.js';

/** One schema step. Never edit a released one: add a new version instead. */
export interface Migration {
  version: number;
  name: string;
  statements: readonly string[];
}

const STATUS_CHECK = `status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')`;

/** The schema's history, oldest first. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'tasks_sessions_events_caps',
    statements: [
      `CREATE TABLE tasks (
        id text PRIMARY KEY CHECK (id ~ '^tsk_[0-9a-f]{32}$'),
        user_id text NOT NULL CHECK (length(user_id) BETWEEN 1 AND 128),
        title text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
        run_spec jsonb NOT NULL,
        board_column text NOT NULL CHECK (length(board_column) BETWEEN 1 AND 40),
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      )`,
      'CREATE INDEX tasks_user_idx ON tasks (user_id, created_at, id)',
      `CREATE TABLE sessions (
        id text PRIMARY KEY CHECK (id ~ '^ses_[0-9a-f]{32}$'),
        task_id text NOT NULL REFERENCES tasks (id),
        user_id text NOT NULL,
        kind text NOT NULL CHECK (kind IN ('run', 'bootstrap')),
        status text NOT NULL CHECK (${STATUS_CHECK}),
        attempt integer NOT NULL CHECK (attempt >= 1),
        enqueued_at timestamptz NOT NULL,
        claimed_at timestamptz,
        backend text CHECK (backend IN ('swarm', 'docker', 'local', 'simulated')),
        handle text CHECK (length(handle) BETWEEN 1 AND 255),
        owner_node text,
        epoch integer NOT NULL DEFAULT 0 CHECK (epoch >= 0),
        started_at timestamptz,
        finished_at timestamptz,
        exit_code integer,
        failure_reason text CHECK (length(failure_reason) <= 1000),
        user_recoverable boolean NOT NULL DEFAULT false,
        updated_at timestamptz NOT NULL,
        UNIQUE (task_id, attempt),
        CHECK (status <> 'running' OR owner_node IS NOT NULL)
      )`,
      // The hot queries: the dispatch queue, and the running sets the caps count.
      `CREATE INDEX sessions_queued_dispatch_idx ON sessions (enqueued_at, id) WHERE status = 'queued'`,
      `CREATE INDEX sessions_running_owner_idx ON sessions (owner_node) WHERE status = 'running'`,
      `CREATE INDEX sessions_running_user_idx ON sessions (user_id) WHERE status = 'running'`,
      // A task has at most one live attempt: a double requeue cannot run it twice.
      `CREATE UNIQUE INDEX sessions_one_live_per_task_idx ON sessions (task_id)
        WHERE status IN ('queued', 'running')`,
      `CREATE TABLE session_events (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        session_id text NOT NULL REFERENCES sessions (id),
        from_status text CHECK (from_status IS NULL OR from_${STATUS_CHECK}),
        to_status text NOT NULL CHECK (to_${STATUS_CHECK}),
        reason text CHECK (length(reason) <= 1000),
        node text,
        epoch integer NOT NULL,
        at timestamptz NOT NULL
      )`,
      'CREATE INDEX session_events_session_idx ON session_events (session_id, id)',
      // History is evidence for post-mortems: the database itself refuses edits.
      `CREATE FUNCTION session_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'session_events is append-only'; END $$`,
      `CREATE TRIGGER session_events_append_only BEFORE UPDATE OR DELETE ON session_events
        FOR EACH ROW EXECUTE FUNCTION session_events_append_only()`,
      `CREATE TABLE user_caps (
        user_id text PRIMARY KEY,
        max_running integer NOT NULL CHECK (max_running >= 0),
        updated_at timestamptz NOT NULL
      )`,
    ],
  },
  {
    version: 2,
    name: 'node_heartbeats',
    statements: [
      // One row per boot of a node (owner = node@boot): who is alive, for
      // the Reconciler of every other node (docs/runtime.md, liveness).
      `CREATE TABLE node_heartbeats (
        owner text PRIMARY KEY CHECK (length(owner) BETWEEN 1 AND 256),
        node_id text NOT NULL CHECK (length(node_id) BETWEEN 1 AND 128),
        started_at timestamptz NOT NULL,
        beat_at timestamptz NOT NULL
      )`,
      // "Has this node booted again since?" and the prune of old boots.
      'CREATE INDEX node_heartbeats_node_idx ON node_heartbeats (node_id, started_at)',
    ],
  },
  {
    version: 3,
    name: 'session_outputs',
    statements: [
      // A finished run's output, written with its finish (one transaction),
      // so it outlives every process (docs/data.md, session_outputs).
      `CREATE TABLE session_outputs (
        session_id text PRIMARY KEY REFERENCES sessions (id),
        text text NOT NULL CHECK (octet_length(text) <= ${16 * 1024 * 1024}),
        total_bytes bigint NOT NULL CHECK (total_bytes >= 0),
        truncated boolean NOT NULL,
        created_at timestamptz NOT NULL
      )`,
    ],
  },
  {
    version: 4,
    name: 'dispatch_engine',
    // Grants decided in the database, in batched ticks, for every node at
    // once (docs/data.md, "Dispatch"): turn keys and per-user counters in
    // rows, and the tick and repair functions that keep them.
    // The functions are the current code's (a fresh store then replaces
    // them with the same text in later versions; an existing one keeps what
    // it ran until those versions re-create them).
    statements: [...DISPATCH_SCHEMA, RT_STATE_ROW, RT_PLACE, RT_TICK, RT_REPAIR],
  },
  {
    version: 5,
    name: 'lean_hot_path',
    // No foreign-key triggers on the tick's tables, a json reply
    // (src/db/sql/leanHotPath.ts; docs/data.md, "What a job costs").
    statements: LEAN_HOT_PATH,
  },
  {
    version: 6,
    name: 'heartbeat_boot_lock',
    // Whether the boot held its boot lock at its last beat: a boot that died
    // before another node's watch saw its lock held is then known dead from
    // its row and pg_locks at once, not after the heartbeat window
    // (src/actors/clusterLiveness.ts).
    statements: ['ALTER TABLE node_heartbeats ADD COLUMN boot_lock boolean NOT NULL DEFAULT false'],
  },
  {
    version: 7,
    name: 'derived_history',
    // A tick writes no history rows: the session row carries its
    // transitions' ticks, one dispatch_ticks row per tick says who ticked,
    // and the session_history view derives the history
    // (src/db/sql/derivedHistory.ts; docs/data.md, "History").
    statements: DERIVED_HISTORY,
  },
  {
    version: 8,
    name: 'tick_lookups_by_key',
    // The tick's lookups by key as lateral probes, so that a generic plan
    // made on empty tables cannot read whole tables on every later tick
    // (src/db/sql/outcomeSql.ts `byKey`; test/db/tick.plans.test.ts).
    statements: [orReplace(RT_PLACE), orReplace(RT_TICK)],
  },
  {
    // The tick answers what other nodes' ticks changed since the caller's
    // `since` (the feed's read, riding the tick); an older node sends no
    // `since` and gets the reply it always got.
    version: 9,
    name: 'tick_reply_changes',
    statements: [orReplace(RT_TICK)],
  },
  {
    // What changed is built as json, not jsonb (src/db/sql/changesSql.ts):
    // the same reply, three to four times cheaper to build, and the tick
    // builds it inside its lock.
    version: 10,
    name: 'changes_as_json',
    statements: [orReplace(RT_TICK)],
  },
  {
    // The reply's sessions, tasks and lines as arrays of the columns the
    // node reads, when the tick asks (src/db/sql/rowJson.ts): ~2.5x cheaper
    // to build than to_json of the rows and half the bytes. An older node
    // asks for none and gets the objects it always got.
    version: 11,
    name: 'tick_reply_rows',
    statements: [orReplace(RT_TICK)],
  },
  {
    // Whether a boot's board is watched (src/db/nodeHeartbeats.ts setWatching): a tick
    // that leaves nothing to grant notifies only if another boot's is, so
    // the listeners of nodes nobody watches are not woken for each tick.
    // Default true: an older node's row, which never says, hears everything.
    version: 12,
    name: 'tick_notify_watchers',
    statements: [
      'ALTER TABLE node_heartbeats ADD COLUMN watching boolean NOT NULL DEFAULT true',
      orReplace(RT_TICK),
    ],
  },
  {
    // A tick's finishes and handles find their rows by key: planned on empty
    // tables, a generic plan read them among every running row (a partial
    // index over running rows), so each tick read all of them
    // (test/db/tick.plans.test.ts, 2,000 running: 2,163 rows read, not 163).
    // And a tick with no ops (a grant-only tick: another node's "grantable",
    // a poke) skips the outcomes statement, and the reply's optional parts
    // are read only when asked for: an op-less tick 270 -> ~100 us on the
    // server (pgbench, one client); a tick with ops, within noise.
    version: 13,
    name: 'tick_finishes_by_key',
    statements: [orReplace(RT_TICK)],
  },
  {
    // A tick linear in its ops. With hash joins off, a set joined back to
    // rows by key was a nested loop over the whole set for every row: the
    // outcomes' positions (src/db/sql/rtPlace.ts `positionAmong`; 500
    // enqueues: a 62 ms tick, ~40 ms of it that join) and the updates of
    // handles, finishes and cancels (src/db/sql/outcomeSql.ts
    // `opsBySession`; 500 finishes: 165 -> 48 ms), and rt_place's rows
    // joined to their users (window functions instead; 500 rows of 500
    // users: 21 of a 36 ms call).
    version: 14,
    name: 'tick_linear_in_ops',
    statements: [orReplace(RT_PLACE), orReplace(RT_TICK)],
  },
  {
    // A reply's position is computed only for a row that has one (queued,
    // with its turn key): as the join's ON condition, the placed test only
    // hid a result the lateral had computed for every outcome, finished and
    // running rows included (src/db/sql/rtPlace.ts `positionAmong`; a steady
    // tick of 100 finishes, enqueues and grants: the reply statement 106 ->
    // 75 us per job, pg_stat_statements).
    version: 15,
    name: 'tick_positions_when_placed',
    statements: [orReplace(RT_TICK)],
  },
  {
    // A handle folded into its run's finish (src/db/tickInput.ts
    // `foldHandles`) is answered with the finish: checked on the row the
    // finish left, and named on the finish's outcome when both applied, so
    // the reply renders no row of its own for it (a steady tick of 20
    // jobs: ~7.2 -> ~5.6 ms on the server). An older node still sends it
    // among the handles, marked folded, and gets its outcome there.
    version: 16,
    name: 'tick_folded_handles_answer_with_finish',
    statements: [orReplace(RT_TICK)],
  },
  {
    // A finish that applied with no requeue is answered as its phase ends,
    // from the row that phase read, when the node asks (`finished`): its
    // row is final, and with no retry in the tick so is its card. The reply
    // statement reads it no second time (a steady tick of 20 short jobs:
    // server time ~5.5 -> ~4.8 ms). An older node does not ask and gets
    // its finishes among the outcomes.
    version: 17,
    name: 'tick_finishes_answered_early',
    statements: [orReplace(RT_TICK)],
  },
  {
    // A caller may bound the changed sessions riding its reply
    // (`changes_max`): a larger set is only flagged (`changes_deferred`) and
    // the node reads it off the tick's lock (src/actors/runtimeFeed.ts).
    // With three nodes enqueueing at once, sets of ~1,000 sessions were
    // built inside the lock every node's tick waits for. An older node
    // does not bound them and gets every change as before.
    version: 18,
    name: 'tick_changes_bounded',
    statements: [orReplace(RT_TICK)],
  },
  {
    // Each boot says how long its beat vouches for it (its beat period
    // times its stale beats), and a reader judges it by that, not by its
    // own window: nodes with different windows (a rolling deploy that
    // changes --dead-after-ms or the Reconciler period, nodes behind a
    // pooler beside direct ones) no longer find a live node dead because
    // it beats less often than they do. NULL: an older node's row, judged
    // by the reader's window as before. At most a day: a row read back is
    // evidence, and a bogus promise must not make a dead node immortal.
    version: 19,
    name: 'heartbeat_stale_after',
    statements: [
      `ALTER TABLE node_heartbeats ADD COLUMN stale_after_ms integer
         CHECK (stale_after_ms BETWEEN 1 AND 86400000)`,
    ],
  },
  {
    // A tick's `changes` leave their tasks' run specs out when the caller
    // says `changes_without_spec` (the feed's read never sends them): a
    // spec can be ~1 MB (64 KB of argv, 128 env values of 8 KB), and every
    // other node read it again at every status change of its task, some of
    // it built inside the lock every node's tick waits for. Only a grant's
    // runner uses the spec, and its grant still carries it. An older node
    // does not ask and gets them as before.
    version: 20,
    name: 'tick_changes_without_spec',
    statements: [orReplace(RT_TICK)],
  },
  {
    // Finished work is kept for a retention period, then pruned whole (the
    // task, its sessions, their history and output: src/db/pruneFinished.ts).
    // Without it every node's board, boot and memory grew with every job
    // ever run (100,000 finished tasks: a 4 s boot and ~165 MB per node).
    // The prune finds old tasks by their creation; and the history stays
    // append-only for everyone else: only a transaction that says it is the
    // prune (`roundtable.prune`, set local) may delete events.
    version: 21,
    name: 'finished_retention',
    statements: [
      'CREATE INDEX tasks_created_idx ON tasks (created_at)',
      `CREATE OR REPLACE FUNCTION session_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF TG_OP = 'DELETE' AND current_setting('roundtable.prune', true) = 'on' THEN
            RETURN OLD;
          END IF;
          RAISE EXCEPTION 'session_events is append-only';
        END $$`,
    ],
  },
  {
    // A run's output keeps its last OUTPUT_TAIL_CHARS characters beside it
    // (src/db/storedTail.ts), written with it: every reader of a tail (a
    // tick's change rows for the other nodes, the feed's read, the board's
    // restore) took \`right(text, n)\` and \`length(text)\`, which read and
    // decompressed the whole output, up to 16 MiB, for every change row of a
    // finished run; inside the tick's lock, 100 runs of 1 MB of output held
    // it ~1.2 s. Rows written before keep null and are read as before.
    version: 22,
    name: 'output_tails',
    statements: [
      'ALTER TABLE session_outputs ADD COLUMN tail text, ADD COLUMN tail_whole boolean',
      orReplace(RT_TICK),
    ],
  },
  {
    // A submission's idempotency key, unique per user (src/db/sql/rtTickAppend.ts):
    // a caller whose acknowledgement was lost (a node killed mid-request in
    // a deploy, a load balancer's timeout) submits again with the same key
    // and gets the task it already has instead of a second run. An older
    // node sends no key and enqueues as before.
    version: 23,
    name: 'submit_keys',
    statements: [
      // A bounded repeat ({1,255}) in a Postgres regex costs ~70 µs a row;
      // the length and an unbounded class, ~4.
      `ALTER TABLE tasks ADD COLUMN submit_key text
        CHECK (length(submit_key) BETWEEN 1 AND 255 AND submit_key ~ '^[\\x21-\\x7e]+$')`,
      `CREATE UNIQUE INDEX tasks_user_submit_key_idx ON tasks (user_id, submit_key)
        WHERE submit_key IS NOT NULL`,
      orReplace(RT_TICK),
    ],
  },
  {
    // A run's time limit (src/actors/runTimeLimit.ts): a run that holds its
    // runner longer than its task allows is failed as `timed_out` and
    // stopped, so a hung agent cannot hold a user's slot for ever. Counted
    // from the grant. An older node neither sends nor enforces one (the
    // grant's pair carries it beside the rows, which keep their shape).
    version: 24,
    name: 'run_time_limits',
    statements: [
      `ALTER TABLE tasks ADD COLUMN time_limit_ms integer
        CHECK (time_limit_ms BETWEEN ${MIN_TIME_LIMIT_MS} AND ${MAX_TIME_LIMIT_MS})`,
      orReplace(RT_TICK),
    ],
  },
  {
    // Every task a tick's reply carries (a change for the other nodes' boards,
    // an enqueue's or a finish's outcome) has its time limit beside its row,
    // as a grant's had since 24: a board shows when a running card will be
    // stopped, on every node. Beside, not in the row: an older node checks a
    // row's array by its length, and ignores a key it does not know.
    version: 25,
    name: 'tick_limits_beside_tasks',
    statements: [orReplace(RT_TICK)],
  },
  {
    // An output's bytes in pieces with their line counts (src/db/sql/outputChunks.ts),
    // written by a trigger: a page of a 16 MiB output read and split all of
    // it (8.4 M lines of `yes`: 0.5-1.2 s a page, on PGlite the node's own
    // thread); it now reads the pieces the page needs (src/db/outputPages.ts).
    // A row written before is indexed the first time a page of it is read.
    version: 26,
    name: 'output_pieces',
    statements: OUTPUT_CHUNKS_SCHEMA,
  },
  {
    // A running session's live output on every node's board, not only on
    // the node that runs it (src/db/liveTails.ts): the lines its card shows,
    // written by its runner's node, read by the others while watched. Off
    // the tick's path: no statement of a tick reads or writes it, and no
    // foreign key puts a trigger on the sessions the tick updates (5).
    // Retention deletes a row with its session.
    version: 27,
    name: 'live_tails',
    statements: [
      'CREATE SEQUENCE live_tail_seq',
      `CREATE TABLE live_tails (
        session_id text PRIMARY KEY,
        owner text NOT NULL CHECK (length(owner) BETWEEN 3 AND 256),
        epoch integer NOT NULL CHECK (epoch >= 0),
        seq bigint NOT NULL,
        lines jsonb NOT NULL CHECK (jsonb_typeof(lines) = 'array' AND jsonb_array_length(lines) <= ${LIVE_TAIL_LINES}),
        written_at timestamptz NOT NULL
      )`,
    ],
  },
];

/** What `migrate` did. */
export interface MigrateResult {
  /** Versions applied by this call, in order (empty when already current). */
  applied: number[];
  /** Highest version now recorded. */
  current: number;
}

/** How long `migrate` waits for another process's migration before it fails. */
export const MIGRATE_LOCK_WAIT_MS = 300_000;
/** How often it asks for the migration lock meanwhile. */
export const MIGRATE_LOCK_POLL_MS = 250;

/** The clock `migrate` waits for the migration lock by; injectable. */
export interface MigrateClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
}

const SYSTEM_CLOCK: MigrateClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
};

export interface MigrateOptions {
  /**
   * How long to wait while another process holds the migration lock (it is
   * migrating: a step that rewrites a large table may take minutes) before
   * failing with `MigrationError`. Default `MIGRATE_LOCK_WAIT_MS` (5 min).
   * The wait is a poll (`pg_try_advisory_xact_lock` every 250 ms), so it is
   * bounded by this and by no server deadline: a blocking lock request would
   * be cancelled by the connection's `lock_timeout` (5 s by default), and
   * every node booting beside a migration longer than that exited with 3.
   */
  lockWaitMs?: number;
  clock?: MigrateClock;
}

/**
 * Brings the schema up to date. Idempotent and safe to call from several
 * processes at once: each waits for the others' migration (up to
 * `lockWaitMs`) and then finds nothing to do. Throws `MigrationError` (with
 * the driver's error as `cause`) when a step fails, when the list is
 * malformed, when a recorded version's name differs from the list (an edited
 * migration), or when the lock stayed taken past `lockWaitMs`. Versions
 * recorded by newer code are left alone: an older node may still run.
 */
export async function migrate(
  db: Kysely<Database>,
  migrations: readonly Migration[] = MIGRATIONS,
  options: MigrateOptions = {},
): Promise<MigrateResult> {
  checkList(migrations);
  const clock = options.clock ?? SYSTEM_CLOCK;
  const lockWaitMs = options.lockWaitMs ?? MIGRATE_LOCK_WAIT_MS;
  const deadline = clock.now() + lockWaitMs;
  try {
    for (;;) {
      const result = await migrateIfFree(db, migrations);
      if (result !== null) return result;
      if (clock.now() >= deadline) {
        throw new MigrationError(
          `another process held the migration lock for more than ${lockWaitMs} ms (a migration still running, or a session stuck holding it: see pg_locks)`,
        );
      }
      await new Promise<void>((resolve) => {
        clock.setTimeout(
          resolve,
          Math.max(0, Math.min(MIGRATE_LOCK_POLL_MS, deadline - clock.now())),
        );
      });
    }
  } catch (error) {
    if (error instanceof MigrationError) throw error;
    throw new MigrationError(`migration failed: ${describe(error)}`, { cause: error });
  }
}

/** One try: `null` when another process holds the migration lock. */
function migrateIfFree(
  db: Kysely<Database>,
  migrations: readonly Migration[],
): Promise<MigrateResult | null> {
  return db.transaction().execute(async (tx) => {
    const { rows } = await sql<{
      got: boolean;
    }>`SELECT pg_try_advisory_xact_lock(${LOCK_NAMESPACE}, ${ADVISORY_LOCKS.migrate}) AS got`.execute(
      tx,
    );
    if (rows[0]?.got !== true) return null;
    await sql`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`.execute(tx);
    const recorded = await tx.selectFrom('schema_migrations').select(['version', 'name']).execute();
    const byVersion = new Map(recorded.map((r) => [r.version, r.name]));
    const applied: number[] = [];
    for (const m of migrations) {
      const name = byVersion.get(m.version);
      if (name !== undefined) {
        if (name !== m.name) {
          throw new MigrationError(
            `migration ${m.version} is recorded as '${name}' but the code calls it '${m.name}'`,
          );
        }
        continue;
      }
      for (const statement of m.statements) await sql.raw(statement).execute(tx);
      await sql`INSERT INTO schema_migrations (version, name) VALUES (${m.version}, ${m.name})`.execute(
        tx,
      );
      applied.push(m.version);
    }
    const current = Math.max(0, ...recorded.map((r) => r.version), ...applied);
    return { applied, current };
  });
}

function checkList(migrations: readonly Migration[]): void {
  let previous = 0;
  for (const m of migrations) {
    if (!Number.isInteger(m.version) || m.version <= previous) {
      throw new MigrationError(`migration versions must increase: ${m.version} after ${previous}`);
    }
    previous = m.version;
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
