/**
 * A tick whose connection dies in the middle (issue 15: "a crash at any
 * point of a tick loses nothing"): the tick has taken the lock and made
 * every write of its phases, and waits on a row lock for its last write
 * (the state row, held by another connection), when its backend is
 * terminated. Nothing it wrote survives, no caller could have been
 * answered, and the same tick sent again applies once. Server only: PGlite
 * has one backend, so there is no second connection to hold the row or to
 * kill the first.
 */
import { sql } from 'kysely';
import { expect } from 'vitest';
import { tick } from '../../src/db/tick.js';
import { describeEachEngine, raceTest } from '../support/databases.js';
import { enqueueOp, expectConsistent, finishOp, ticker } from './tickFixtures.js';

/** Everything a tick writes, as one comparable snapshot. */
async function snapshot(db: Parameters<typeof expectConsistent>[0]) {
  const { rows } = await sql<{ s: unknown }>`
    SELECT json_build_object(
      'sessions', (SELECT json_agg(json_build_object('id', id, 'status', status, 'epoch', epoch,
         'turn', turn, 'ticks', json_build_array(queued_tick, claimed_tick, ended_tick)) ORDER BY id) FROM sessions),
      'tasks', (SELECT json_agg(json_build_object('id', id, 'column', board_column) ORDER BY id) FROM tasks),
      'lines', (SELECT json_agg(to_json(l) ORDER BY user_id) FROM user_lines l),
      'state', (SELECT to_json(d) FROM dispatch_state d),
      'ticks', (SELECT count(*) FROM dispatch_ticks),
      'outputs', (SELECT count(*) FROM session_outputs)) AS s`.execute(db);
  return rows[0]?.s;
}

describeEachEngine('tick killed mid-statement', (getDb, engine) => {
  raceTest(engine)(
    'a tick whose backend is terminated before its commit writes nothing; sent again it applies once',
    async () => {
      const { db, connectAnother } = getDb();
      const t = ticker(db, { defaultUserCap: 1 });
      const first = await t([enqueueOp('ann'), enqueueOp('bob'), enqueueOp('ann')], { want: 2 });
      const running = first.granted.map((g) => g.session);
      const before = await snapshot(db);

      // The tick under test: finishes both runs, enqueues, grants.
      const input = t.input([...running.map((s) => finishOp(s.id, s.epoch)), enqueueOp('cat')], {
        want: 2,
      });
      const victim = await connectAnother();
      const holder = await connectAnother();
      let outcome: unknown;
      await holder.db.transaction().execute(async (tx) => {
        await sql`SELECT 1 FROM dispatch_state FOR UPDATE`.execute(tx);
        const sent = tick(victim.db, input).then(
          (r) => ({ ok: r }),
          (e: unknown) => ({ error: e }),
        );
        // Wait (30 s at most) until the tick is blocked on the state row: its phases are all written.
        let pid: number | undefined;
        for (let i = 0; i < 600 && pid === undefined; i++) {
          // A transaction reads pg_stat_activity once and keeps that snapshot:
          // without clearing it, a first look taken before the tick blocked
          // would be all this loop ever sees.
          await sql`SELECT pg_stat_clear_snapshot()`.execute(tx);
          const { rows } = await sql<{ pid: number }>`
            SELECT pid FROM pg_stat_activity
            WHERE query LIKE 'SELECT rt_tick(%' AND wait_event_type = 'Lock'
              AND datname = current_database()`.execute(tx);
          pid = rows[0]?.pid;
          if (pid === undefined) await new Promise((r) => setTimeout(r, 50));
        }
        expect(pid, 'the tick waits on the state row').toBeDefined();
        await sql`SELECT pg_terminate_backend(${pid}::int)`.execute(tx);
        outcome = await sent;
      });
      expect(outcome).toHaveProperty('error');
      expect(await snapshot(db)).toEqual(before);
      await expectConsistent(db);

      // The node sends the same tick again: it applies, once.
      const again = await tick(db, input);
      expect(again.outcomes.map((o) => o.kind)).toEqual(['applied', 'applied', 'applied']);
      expect(again.granted.map((g) => g.task.userId).sort()).toEqual(['ann', 'cat']);
      const twice = await tick(db, input);
      expect(twice.changed).toBe(false);
      expect(twice.outcomes.map((o) => o.kind)).toEqual(['applied', 'applied', 'applied']);
      await expectConsistent(db);
    },
    60_000,
  );
});
