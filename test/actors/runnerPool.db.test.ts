/**
 * The pool rebuilt from real rows, on PGlite and (with
 * ROUNDTABLE_TEST_DATABASE_URL) the Postgres server: running rows hold their
 * slots, queued rows line up in dispatch order, caps come from user_caps and
 * survive a restart, and a grant becomes a durable claim.
 */
import { expect, it } from 'vitest';
import { type AnyActorRef, waitFor } from 'xstate';
import { startRunnerPool } from '../../src/actors/runnerPoolClient.js';
import { dbPoolStore } from '../../src/actors/runnerPoolStore.js';
import { claimWithinCaps } from '../../src/db/claimWithinCaps.js';
import type { Grant } from '../../src/machines/poolIndex.js';
import { enqueue, steppingClock } from '../db/fixtures.js';
import { describeEachEngine } from '../support/databases.js';

/** Waits for the rows to be in, with a deadline (real I/O: the server is across a socket). */
async function untilReady(actor: AnyActorRef): Promise<void> {
  await waitFor(actor, (s) => s.value === 'ready', { timeout: 10_000 });
}

describeEachEngine('RunnerPool over session rows', (getDb) => {
  it('boots from queued and running rows, with the caps in user_caps, and keeps them across a restart', async () => {
    const { db } = getDb();
    const clock = steppingClock();
    const a = [];
    for (let i = 0; i < 3; i++) a.push((await enqueue(db, 'alice', clock())).session);
    const b1 = (await enqueue(db, 'bob', clock())).session;
    const c1 = (await enqueue(db, 'carol', clock())).session;
    const caps = { owner: 'node-a', globalCap: 3, defaultUserCap: 2 };
    const first = await claimWithinCaps(db, { ...caps, now: clock() });
    expect(first).toMatchObject({ kind: 'claimed', session: { id: a[0]?.id } });

    const store = dbPoolStore(db);
    const unwaited: Grant[] = [];
    const now = () => clock().getTime();
    const boot = startRunnerPool(store, {
      caps: { globalMax: 3, perUserMax: 2 },
      now,
      onUnwaitedGrant: (g) => unwaited.push(g),
    });
    await untilReady(boot.actor);
    // alice runs a0 and may run one more; bob is next in dispatch order.
    expect(unwaited).toEqual([
      { sessionId: a[1]?.id, userId: 'alice' },
      { sessionId: b1.id, userId: 'bob' },
    ]);
    expect(boot.pool.positionOf(a[2]?.id as string)).toBe(2);
    expect(boot.pool.positionOf(c1.id)).toBe(1);
    await boot.pool.setUserCap('carol', 0);
    boot.pool.close();
    boot.actor.stop();

    // A restart before any grant was claimed: the rows still say queued.
    const again = startRunnerPool(store, { caps: { globalMax: 3, perUserMax: 2 }, now });
    await untilReady(again.actor);
    const snap = again.pool.snapshot();
    expect(snap.users.find((u) => u.userId === 'carol')).toEqual({
      userId: 'carol',
      running: 0,
      queued: 1,
      cap: 0,
    });
    expect(snap.totals).toEqual({ running: 3, queued: 2 });
    // The grant becomes durable through the claim with the cap check.
    for (const g of [a[1], b1]) {
      const outcome = await claimWithinCaps(db, { ...caps, sessionId: g?.id, now: clock() });
      expect(outcome.kind).toBe('claimed');
    }
    again.pool.rebuild();
    await untilReady(again.actor);
    expect(again.pool.snapshot().totals).toEqual({ running: 3, queued: 2 });
    again.pool.close();
    again.actor.stop();
  });
});
