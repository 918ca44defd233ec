/**
 * A task's time limit in the store (migration 24): an enqueue's
 * `timeLimitMs` lands on the task, a grant (and a resync's owned run)
 * carries it beside its rows, the adopter's read finds it, and the store's
 * CHECK refuses what the op schema refuses.
 */
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { readChanges } from '../../src/db/dispatchReads.js';
import { tick } from '../../src/db/tick.js';
import type { TickEnqueue } from '../../src/db/tickTypes.js';
import * as timeLimit from '../../src/db/timeLimit.js';
import { limitOfPair, timeLimitsOf } from '../../src/db/timeLimit.js';
import { validateTickOp } from '../../src/db/validateTickOp.js';
import { describeEachEngine } from '../support/databases.js';
import { runDocExamples } from '../support/docExamples.js';
import { appliedOf, enqueueOp, expectConsistent, finishOp, ticker } from './tickFixtures.js';

runDocExamples(new URL('../../src/db/timeLimit.ts', import.meta.url), timeLimit);

const limited = (userId: string, ms: number): TickEnqueue => ({
  ...enqueueOp(userId, 'a limited task'),
  timeLimitMs: ms,
});

describeEachEngine('tick: time limits', (getDb) => {
  it('a limit lands on the task; its grant and a resync carry it; no limit is null', async () => {
    const { db } = getDb();
    const t = ticker(db, { defaultUserCap: 5 });
    const a = limited('ida', 90_000);
    const b = enqueueOp('ida');
    await t([a, b]);
    const { rows } = await sql<{ id: string; time_limit_ms: number | null }>`
      SELECT id, time_limit_ms FROM tasks`.execute(db);
    expect(new Map(rows.map((r) => [r.id, r.time_limit_ms]))).toEqual(
      new Map([
        [a.taskId, 90_000],
        [b.taskId, null],
      ]),
    );

    const granted = await t([], { want: 2 });
    expect(granted.granted.map((g) => [g.session.id, g.limitMs])).toEqual([
      [a.sessionId, 90_000],
      [b.sessionId, null],
    ]);
    const resync = await t([], { resync: true });
    expect(new Map(resync.owned?.map((g) => [g.session.id, g.limitMs]))).toEqual(
      new Map([
        [a.sessionId, 90_000],
        [b.sessionId, null],
      ]),
    );
    // What an adopter reads: only the limited ones.
    expect(await timeLimitsOf(db, [a.sessionId, b.sessionId, 'ses_none'])).toEqual(
      new Map([[a.sessionId, 90_000]]),
    );
    expect(await timeLimitsOf(db, [])).toEqual(new Map());
    await expectConsistent(db);
  });

  it('every task a reply carries has its limit beside its row: outcomes, grants, finishes, changes', async () => {
    const { db } = getDb();
    const t = ticker(db, { defaultUserCap: 5 });
    const seen = await t([]);
    const a = limited('ida', 90_000);
    const b = enqueueOp('ida');
    const queued = await t([a, b]);
    expect(appliedOf(queued, a.ref).task?.timeLimitMs).toBe(90_000);
    expect(appliedOf(queued, b.ref).task?.timeLimitMs).toBeNull();
    const granted = await t([], { want: 2 });
    expect(granted.granted.map((g) => g.task.timeLimitMs)).toEqual([90_000, null]);
    const [ga, gb] = granted.granted;
    const fa = finishOp(ga!.session.id, ga!.session.epoch);
    const fb = finishOp(gb!.session.id, gb!.session.epoch);
    const finished = await t([fa, fb]);
    expect(appliedOf(finished, fa.ref).task?.timeLimitMs).toBe(90_000);
    expect(appliedOf(finished, fb.ref).task?.timeLimitMs).toBeNull();
    // Another node's view: its tick's changes and the feed's read.
    const other = await t([], { owner: 'node-b@boot1', since: seen.tick });
    const read = await readChanges(db, seen.tick);
    for (const changes of [other.changes ?? [], read.sessions])
      expect(new Map(changes.map((c) => [c.task.id, c.task.timeLimitMs]))).toEqual(
        new Map([
          [a.taskId, 90_000],
          [b.taskId, null],
        ]),
      );
  });

  it('a limit out of bounds is refused by the op schema and by the store', async () => {
    const { db } = getDb();
    expect(() => validateTickOp(limited('jo', 999))).toThrow(/timeLimitMs/);
    expect(() => validateTickOp(limited('jo', 1_500.5))).toThrow(/timeLimitMs/);
    expect(() => validateTickOp(limited('jo', 2_147_483_648))).toThrow(/timeLimitMs/);
    expect(validateTickOp(limited('jo', 1_000))).toMatchObject({ timeLimitMs: 1_000 });
    // Past the schema (a caller of `tick` that skips it), the CHECK still holds.
    const input = ticker(db).input([limited('jo', 10)]);
    await expect(tick(db, input)).rejects.toThrow();
    expect(
      (await sql<{ n: number }>`SELECT count(*)::int AS n FROM tasks`.execute(db)).rows[0]?.n,
    ).toBe(0);
  });
});

it('limitOfPair reads what a grant carries, and refuses a corrupt one', () => {
  expect(limitOfPair({ limit: 60_000 })).toBe(60_000);
  expect(limitOfPair({ limit: null })).toBeNull();
  expect(limitOfPair({})).toBeNull();
  expect(() => limitOfPair({ limit: 12 })).toThrow(/time_limit_ms/);
});
