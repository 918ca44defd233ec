/**
 * The two cluster-wide promises of the tick, on the rows themselves:
 * round-robin fairness (a newcomer waits at most one grant per other user
 * with work, docs/runner-pool.md "Fairness"), and caps never exceeded at any
 * instant while several connections tick at once (the history replayed in
 * id order: ticks are serial, so event ids are in commit order).
 */
import fc from 'fast-check';
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import type { Session } from '../../src/db/rows.js';
import { tick } from '../../src/db/tick.js';
import type { TickOp } from '../../src/db/tickTypes.js';
import { describeEachEngine, raceTest, truncateAll } from '../support/databases.js';
import { readDispatchHistory } from '../support/dispatchReplay.js';
import { enqueueOp, expectConsistent, finishOp, ticker } from './tickFixtures.js';

describeEachEngine('tick fairness and caps', (getDb, engine) => {
  it('a newcomer waits at most one grant per other user with work', async () => {
    const { db } = getDb();
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 2 }),
        fc.array(fc.nat(), { minLength: 60, maxLength: 60 }),
        async (floods, globalCap, userCap, choices) => {
          await truncateAll(db);
          const t = ticker(db, { globalCap, defaultUserCap: userCap });
          const held: Session[] = [];
          const ops = floods.flatMap((n, u) =>
            Array.from({ length: n }, () => enqueueOp(`flood${u}`)),
          );
          held.push(...(await t(ops, { want: choices[0]! % 3 })).granted.map((g) => g.session));
          const newcomer = enqueueOp('newcomer');
          held.push(...(await t([newcomer])).granted.map((g) => g.session));
          const since = new Map<string, number>();
          for (let i = 1; !held.some((s) => s.id === newcomer.sessionId); i++) {
            if (i > 200) throw new Error('the newcomer was never granted');
            const c = choices[i % choices.length]!;
            const done = held.splice(c % Math.max(1, held.length), held.length > 0 ? 1 : 0);
            const r = await t(
              done.map((s) => finishOp(s.id, s.epoch)),
              { want: 1 + (c % 3) },
            );
            for (const g of r.granted) {
              held.push(g.session);
              if (g.session.id === newcomer.sessionId) break;
              since.set(g.session.userId, (since.get(g.session.userId) ?? 0) + 1);
            }
          }
          for (const n of since.values()) expect(n).toBeLessThanOrEqual(1);
          await expectConsistent(db);
        },
      ),
      { numRuns: 15 },
    );
  }, 240_000);

  raceTest(engine)(
    'concurrent ticks from five connections never exceed a cap at any instant',
    async () => {
      const { db, connectAnother } = getDb();
      await truncateAll(db);
      const pool = (await connectAnother()).db;
      const caps = { globalCap: 6, defaultUserCap: 2 };
      const users = ['ann', 'ben', 'cat', 'dan'];
      await tick(db, {
        owner: 'setup@b',
        now: new Date(),
        ...caps,
        want: 0,
        ops: [{ op: 'cap', ref: 'c', userId: 'dan', maxRunning: 1 }],
      });
      const node = async (n: number) => {
        const owner = `node${n}@boot`;
        let held: Session[] = [];
        for (let round = 0; round < 25; round++) {
          const ops: TickOp[] = held.map((s) => finishOp(s.id, s.epoch));
          ops.push(
            enqueueOp(users[(n + round) % users.length]!),
            enqueueOp(users[round % users.length]!),
          );
          const r = await tick(pool, { owner, now: new Date(), ...caps, want: 3, ops });
          held = r.granted.map((g) => g.session);
          for (const o of r.outcomes) expect(o.kind).toBe('applied');
        }
        await tick(pool, {
          owner,
          now: new Date(),
          ...caps,
          want: 0,
          ops: held.map((s) => finishOp(s.id, s.epoch)),
        });
      };
      await Promise.all([0, 1, 2, 3, 4].map(node));

      const rows = (await readDispatchHistory(db)).map((e) => ({
        user_id: e.userId,
        from_status: e.from,
        to_status: e.to,
      }));
      const running = new Map<string, number>();
      let total = 0;
      let grants = 0;
      let peak = 0;
      for (const e of rows) {
        const delta = (e.to_status === 'running' ? 1 : 0) - (e.from_status === 'running' ? 1 : 0);
        if (delta === 0) continue;
        if (delta > 0) grants += 1;
        total += delta;
        running.set(e.user_id, (running.get(e.user_id) ?? 0) + delta);
        peak = Math.max(peak, total);
        expect(total).toBeLessThanOrEqual(caps.globalCap);
        expect(running.get(e.user_id)).toBeLessThanOrEqual(
          e.user_id === 'dan' ? 1 : caps.defaultUserCap,
        );
      }
      expect(grants).toBeGreaterThan(50);
      expect(peak).toBe(caps.globalCap);
      expect(total).toBe(0);
      await expectConsistent(db);
      const ticks = await sql<{
        n: string;
      }>`SELECT count(*) AS n FROM dispatch_ticks`.execute(db);
      expect(Number(ticks.rows[0]?.n)).toBeGreaterThan(100);
    },
    120_000,
  );
});
