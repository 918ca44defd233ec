/**
 * The floor under roundtable's tick: only the row writes a job needs in
 * this schema, with nothing else, so the report can say how far any tick
 * over these rows could go. Per job: the task and its session inserted and
 * placed in the user's line (`rt_place`, the tick's own placement), the
 * grant (the tick's own pick and writes, `GRANT_WRITES`), and the finish (the session
 * final, the card's column, the line's running count). Both calls hold the
 * dispatch lock, as the tick does: exact caps and one order over every
 * node need one writer at a time.
 *
 * Left out, against `rt_tick`: the JSON ops and reply (sessions and tasks
 * rendered for the node), compare-and-set outcomes, exact positions, the
 * changes other nodes read, the state row and the tick log, handles and
 * outputs. So a real tick can only be slower; whatever the node costs
 * comes on top. The loop is the tick-only row's (roundtableTick.ts): one
 * call in flight, the finishes of the last call's grants ride the next.
 * No latency scenario: the loop naps when idle, as the tick-only one.
 */

import pg from 'pg';
import { ADVISORY_LOCKS, LOCK_NAMESPACE } from '../../../src/db/advisoryLocks.js';
import { newId } from '../../../src/db/index.js';
import { GRANT_WRITES } from '../../../src/db/sql/rtTickGrant.js';
import type { BenchSystem, QueueClient, WorkerHandle } from '../types.js';
import { batchedEnqueue } from './batchedEnqueue.js';
import { grantLoop } from './grantLoop.js';
import { migrateRoundtable } from './migrateRoundtable.js';

const IDLE_POLL_MS = 10;
const ENQUEUE_BATCH = 500;
const USERS = 100;
const USER_CAP = 1;
const SPEC = JSON.stringify({ image: 'bench', command: ['true'] });

const LOCK = `PERFORM pg_advisory_xact_lock(${LOCK_NAMESPACE}, ${ADVISORY_LOCKS.claimSlot});`;
/** As rt_tick's statements: generic plans, nested loops by key. */
const SETTINGS = `LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan
  SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off SET jit = off`;

/** Tasks, sessions and lines for a batch of new jobs (rows: task_id, id, user_id, title, ord). */
const FLOOR_ENQUEUE = `CREATE FUNCTION floor_enqueue(p jsonb) RETURNS void ${SETTINGS} AS $$
DECLARE v_tick bigint := nextval('floor_ticks');
BEGIN
  ${LOCK}
  INSERT INTO tasks (id, user_id, title, run_spec, board_column, created_at, updated_at)
  SELECT x.task_id, x.user_id, x.title, '${SPEC}', 'queued', now(), now()
  FROM jsonb_to_recordset(p) AS x(task_id text, user_id text, title text);
  -- The next join number as a scan of the lines (the tick keeps it in its state row).
  PERFORM rt_place(p, false, v_tick, now(), ${USER_CAP},
    (SELECT coalesce(max(join_seq) + 1, 0) FROM user_lines));
END $$`;

/** Finishes the runs named, then grants up to `v_free`: the granted sessions and their titles. */
const FLOOR_TICK = `CREATE FUNCTION floor_tick(fin text[], v_free integer, v_owner text)
  RETURNS TABLE (out_id text, out_title text) ${SETTINGS} AS $$
DECLARE v_tick bigint := nextval('floor_ticks'); v_now timestamptz := now();
BEGIN
  ${LOCK}
  WITH f AS (
    UPDATE sessions s SET status = 'succeeded', finished_at = v_now, exit_code = 0,
      updated_at = v_now, ended_tick = v_tick
    WHERE s.id = ANY (fin) AND (s.status = 'running') IS TRUE
    RETURNING s.task_id, s.user_id
  ), t AS (
    UPDATE tasks k SET board_column = 'done', updated_at = v_now FROM f WHERE k.id = f.task_id
  )
  UPDATE user_lines l SET running = l.running - x.n, tick = v_tick
  FROM (SELECT f.user_id, count(*) AS n FROM f GROUP BY f.user_id) x WHERE l.user_id = x.user_id;
  IF v_free > 0 THEN
    RETURN QUERY
${GRANT_WRITES}    SELECT g.id, k.title FROM g JOIN tasks k ON k.id = g.task_id
      WHERE NOT coalesce((SELECT bool_or(lu.over) FROM lu), false);
  END IF;
END $$`;

const userOf = (key: string): string => `u${Number(/\d+/.exec(key)?.[0] ?? 0) % USERS}`;

export const roundtableFloor: BenchSystem = {
  name: 'roundtable-floor',
  label:
    "the row writes alone (a job's inserts, grant and finish under the tick's lock), 100 users",
  scenarios: ['throughput'],
  version: 'roundtable 0.1.0 (schema and grant of this commit, no tick(), no runtime)',
  settings: {
    store: 'a bare pg.Pool (max 2): two bench functions over the real schema, no query builder',
    enqueue: `the bench process: floor_enqueue in batches of ${ENQUEUE_BATCH} (tasks insert + rt_place)`,
    'dispatch stand-in': `one loop, one call in flight: floor_tick(finishes of the last grants, free slots of global 20); naps ${IDLE_POLL_MS} ms when it holds and got nothing`,
    users: `${USERS} users round-robin, per-user cap ${USER_CAP}`,
  },
  recovery: {
    defaultBehaviour: 'none: a lower bound of the writes, not a queue',
    measuredWith: 'not measured',
  },
  recoveryUnavailable: 'n/a: row writes only',

  async setup(url) {
    await migrateRoundtable(url);
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      await c.query('CREATE SEQUENCE floor_ticks START 1000000');
      await c.query(FLOOR_ENQUEUE);
      await c.query(FLOOR_TICK);
    } finally {
      await c.end();
    }
  },

  async client(url): Promise<QueueClient> {
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    let ord = 0;
    const send = async (keys: readonly string[]): Promise<void> => {
      const rows = keys.map((key) => ({
        ord: ord++,
        id: newId('session'),
        task_id: newId('task'),
        user_id: userOf(key),
        title: key,
        kind: 'run',
        attempt: 1,
        reason: 'created',
      }));
      await pool.query('SELECT floor_enqueue($1)', [JSON.stringify(rows)]);
    };
    return {
      ...batchedEnqueue(ENQUEUE_BATCH, send),
      async pending() {
        const r = await pool.query<{ n: string }>(
          "SELECT count(*) AS n FROM sessions WHERE status IN ('queued', 'running')",
        );
        return Number(r.rows[0]?.n ?? 0);
      },
      failedKeys: async () => [],
      close: () => pool.end(),
    };
  },

  async startWorker(url, mode, onStart): Promise<WorkerHandle> {
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    const owner = `bench-floor@${process.pid}`;
    return grantLoop<string>({
      owner,
      mode,
      idleMs: IDLE_POLL_MS,
      async call(done, free) {
        const r = await pool.query<{ out_id: string; out_title: string }>(
          'SELECT out_id, out_title FROM floor_tick($1, $2, $3)',
          [done, free, owner],
        );
        return r.rows.map((g) => ({ key: g.out_title, run: g.out_id }));
      },
      onStart,
      close: () => pool.end(),
    });
  },
};
