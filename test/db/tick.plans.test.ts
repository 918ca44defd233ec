/**
 * A tick's reads stay flat in the size of the tables, whatever the
 * statistics were when its plans were made (issue 15: "node-side cost flat
 * in queue depth" needs the database side flat too).
 *
 * `rt_tick` runs with generic plans, made once per connection at its first
 * tick, often on empty tables (a fresh database, the first tick after a
 * TRUNCATE). Planned on a table believed to hold one row, a join by key may
 * become a full index scan filtered afterwards, which then reads every row
 * the table has grown to on every tick: it did, in the reply's position
 * join and the enqueue phase (26.9M rows filtered over 419 ticks of one
 * bench run). This test makes the plans on empty tables, measures the
 * tuples one steady tick reads (`pg_stat_xact_user_tables`, inside the
 * tick's own transaction: exact counts, no timing), grows the history
 * behind it by 20,000 finished jobs, and measures again.
 */
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { connect, type DbHandle } from '../../src/db/connect.js';
import { tick } from '../../src/db/tick.js';
import type { TickSession as Session, TickInput, TickOp } from '../../src/db/tickTypes.js';
import type { Db } from '../../src/db/transaction.js';
import { describeEachEngine, TEST_DATABASE_URL_VAR, withDatabase } from '../support/databases.js';
import { enqueueOp, expectConsistent, finishOp, ref, requeueOp } from './tickFixtures.js';

const USERS = 40;
const BATCH = 20;
const HISTORY = 20_000;

/** Tuples read (sequential + index fetches), per table a tick touches. */
type Reads = Record<'sessions' | 'tasks' | 'user_lines', number>;

/** The tuples this transaction has read so far, per table. */
async function readsSoFar(tx: Db): Promise<Reads> {
  const { rows } = await sql<{ relname: keyof Reads; n: string }>`
    SELECT relname, coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) AS n
    FROM pg_stat_xact_user_tables WHERE relname IN ('sessions', 'tasks', 'user_lines')`.execute(tx);
  const reads: Reads = { sessions: 0, tasks: 0, user_lines: 0 };
  for (const r of rows) reads[r.relname] = Number(r.n);
  return reads;
}

/**
 * One tick in a transaction of its own, with the tuples it read per table:
 * the difference of two looks inside the transaction (PGlite's single
 * backend does not reset these counters at every commit).
 */
async function measuredTick(db: Db, input: TickInput) {
  return db.transaction().execute(async (tx) => {
    const before = await readsSoFar(tx);
    const result = await tick(tx, input);
    const after = await readsSoFar(tx);
    const reads: Reads = {
      sessions: after.sessions - before.sessions,
      tasks: after.tasks - before.tasks,
      user_lines: after.user_lines - before.user_lines,
    };
    return { result, reads };
  });
}

/** 20,000 finished jobs of other users, written as plain rows (not through ticks). */
async function growHistory(db: Db): Promise<void> {
  await sql`
    INSERT INTO tasks (id, user_id, title, run_spec, board_column, created_at, updated_at, submit_key)
    SELECT 'tsk_' || md5('h' || i), 'old-' || (i % 500), 'old job', '{"image":"x","command":["true"]}',
      'done', now(), now(), 'h' || i
    FROM generate_series(1, ${HISTORY}) AS i`.execute(db);
  await sql`
    INSERT INTO sessions (id, task_id, user_id, kind, status, attempt, enqueued_at, claimed_at,
      finished_at, owner_node, epoch, exit_code, updated_at, queued_tick, claimed_tick, ended_tick)
    SELECT 'ses_' || md5('h' || i), 'tsk_' || md5('h' || i), 'old-' || (i % 500), 'run', 'succeeded', 1,
      now(), now(), now(), 'gone@boot', 1, 0, now(), NULL, NULL, NULL
    FROM generate_series(1, ${HISTORY}) AS i`.execute(db);
}

/** 2,000 running sessions of another node's users, as plain rows (the counters are not the point here). */
async function growRunning(db: Db): Promise<void> {
  await sql`
    INSERT INTO tasks (id, user_id, title, run_spec, board_column, created_at, updated_at)
    SELECT 'tsk_' || md5('r' || i), 'busy-' || (i % 500), 'busy job', '{"image":"x","command":["true"]}',
      'running', now(), now()
    FROM generate_series(1, ${RUNNING}) AS i`.execute(db);
  await sql`
    INSERT INTO sessions (id, task_id, user_id, kind, status, attempt, enqueued_at, claimed_at,
      owner_node, epoch, updated_at)
    SELECT 'ses_' || md5('r' || i), 'tsk_' || md5('r' || i), 'busy-' || (i % 500), 'run', 'running', 1,
      now(), now(), 'other@boot', 1, now()
    FROM generate_series(1, ${RUNNING}) AS i`.execute(db);
}
const RUNNING = 2_000;

let keys = 0;
/** Every other enqueue with a submission key: its lookup by (user, key) must stay a probe too. */
const someKeyed = (userId: string, i: number): TickOp =>
  i % 2 === 0 ? { ...enqueueOp(userId), key: `k${++keys}` } : enqueueOp(userId);

describeEachEngine('tick reads, planned on empty tables', (getDb, engine) => {
  // Analyzed while empty or never analyzed: the planner's two views of an empty table.
  it.each([
    ['never analyzed', false],
    ['analyzed while empty', true],
  ])(
    'a steady tick reads as many rows with 20,000 finished jobs, 4,000 queued or 2,000 running behind it as with none (%s)',
    async (_, analyzed) => {
      let own: DbHandle | undefined;
      let db: Db = getDb().db;
      if (engine === 'postgres') {
        // One connection, so that every tick below runs on the plans its first tick made.
        const { rows } = await sql<{ d: string }>`SELECT current_database() AS d`.execute(db);
        const url = withDatabase(process.env[TEST_DATABASE_URL_VAR] ?? '', rows[0]?.d ?? '');
        own = await connect({ databaseUrl: url, poolMax: 1 });
        db = own.db;
      }
      try {
        let clock = Date.parse('2026-07-14T10:00:00Z');
        const input = (ops: TickOp[], want = BATCH): TickInput => {
          clock += 1000;
          return {
            owner: 'node-a@boot1',
            now: new Date(clock),
            globalCap: BATCH,
            defaultUserCap: 1,
            want,
            ops,
          };
        };
        // Plans made on empty tables: one tick with every phase, the first of this connection.
        if (analyzed) await sql`ANALYZE sessions, tasks, user_lines`.execute(db);
        const a = { ...enqueueOp('u-0'), key: 'first' };
        const b = enqueueOp('u-0');
        const first = await measuredTick(db, input([a, b], 1));
        const [g] = first.result.granted;
        if (g === undefined) throw new Error('nothing granted');
        const cancel: TickOp = {
          op: 'cancel',
          ref: ref('c'),
          sessionId: b.sessionId,
          expected: { status: 'queued', epoch: 0 },
          reason: 'by test',
          column: 'cancelled',
        };
        const handle: TickOp = {
          op: 'handle',
          ref: ref('h'),
          sessionId: g.session.id,
          epoch: g.session.epoch,
          backend: 'simulated',
          handle: 'sim-1',
          startedAt: null,
        };
        const second = await measuredTick(
          db,
          input([handle, cancel, requeueOp(g.session.id, g.session.epoch)], 1),
        );
        let held: Session[] = second.result.granted.map((x) => x.session);

        // Steady ticks: the previous grants finish (one re-queued at its head), BATCH more arrive.
        const steady = async (): Promise<Reads> => {
          const ops: TickOp[] = held.map((s, i) =>
            i === 0 ? requeueOp(s.id, s.epoch) : finishOp(s.id, s.epoch),
          );
          for (let i = 0; i < BATCH; i++) ops.push(someKeyed(`u-${i % USERS}`, i));
          const { result, reads } = await measuredTick(db, input(ops));
          held = result.granted.map((x) => x.session);
          return reads;
        };
        for (let i = 0; i < 5; i++) await steady();
        const small = await steady();

        await growHistory(db);
        for (let i = 0; i < 2; i++) await steady();
        const large = await steady();

        // Flat: the same work reads the same rows, give or take the lines the
        // queue's growth by BATCH per tick adds; nowhere near the 20,000 behind.
        for (const table of ['sessions', 'tasks', 'user_lines'] as const) {
          expect(large[table], `${table}: ${JSON.stringify({ small, large })}`).toBeLessThanOrEqual(
            small[table] * 1.25 + 50,
          );
        }
        expect(large.sessions).toBeLessThan(1_000);

        // And a deep queue: 4,000 more queued behind the same users. Each
        // eligible user's first sessions are found by its line's index, not by
        // walking every queued row for that user's (the generic plan made on
        // empty tables once could, the two partial indexes over queued rows
        // costing the same there).
        for (let i = 0; i < 8; i++) {
          const ops: TickOp[] = [];
          for (let j = 0; j < 500; j++) ops.push(someKeyed(`u-${j % USERS}`, j));
          await measuredTick(db, input(ops, 0));
        }
        for (let i = 0; i < 2; i++) await steady();
        const deep = await steady();
        for (const table of ['sessions', 'tasks', 'user_lines'] as const) {
          expect(deep[table], `${table}: ${JSON.stringify({ small, deep })}`).toBeLessThanOrEqual(
            small[table] * 1.25 + 50,
          );
        }

        // And many running: 2,000 runs of other nodes (a cluster with a large
        // global cap). A finish or handle finds its row by key, not among
        // every running row (the partial indexes over running rows cost the
        // same as the key on empty tables, so a generic plan could pick them).
        await growRunning(db);
        for (let i = 0; i < 2; i++) await steady();
        const busy = await steady();
        for (const table of ['sessions', 'tasks', 'user_lines'] as const) {
          expect(busy[table], `${table}: ${JSON.stringify({ small, busy })}`).toBeLessThanOrEqual(
            small[table] * 1.25 + 50,
          );
        }
        await sql`DELETE FROM sessions WHERE owner_node = 'other@boot'`.execute(db);
        await expectConsistent(db);
      } finally {
        await own?.close();
      }
    },
    // Its own budget, not the suite's 30 s: on PGlite, analysed while empty,
    // the deep queue's eight enqueue ticks of 500 take 14-17 s (measured
    // idle, 8 December), and CI's two workers made it 32 s. Why they are
    // slow, and what this test does not see of it: a fresh enqueue's
    // `task_taken` lookup by id was planned on `tasks_user_idx` (user_id,
    // created_at, id) and reads that whole index at every lookup as an
    // index-only scan, which `pg_stat_xact_user_tables` does not count
    // (docs/dispatch-measurements.md, 8 December).
    90_000,
  );
});

describeEachEngine('tick plans, compiled', (getDb) => {
  // The function plans with enable_seqscan = off, so a sequential scan of a
  // tiny table (node_heartbeats, a handful of rows) costs 1e10 and every
  // plan holding one passes jit_above_cost: with JIT on, each tick compiled
  // its plans again, ~150 ms a tick (measured: 2,000 no-op jobs in 14.5 s
  // instead of 3.3 s). The function turns JIT off for its own statements.
  it('rt_tick runs with JIT off', async () => {
    const { db } = getDb();
    const { rows } = await sql<{ config: string[] | null }>`
      SELECT proconfig AS config FROM pg_proc WHERE proname = 'rt_tick'`.execute(db);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.config).toEqual(expect.arrayContaining(['jit=off', 'enable_seqscan=off']));
  });
});
