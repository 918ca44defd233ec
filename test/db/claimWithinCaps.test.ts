import { fc } from '@fast-check/vitest';
import { expect, it } from 'vitest';
import { claimWithinCaps } from '../../src/db/claimWithinCaps.js';
import { countRunning, listQueued, listRunning } from '../../src/db/sessionQueries.js';
import { finish } from '../../src/db/sessionTransitions.js';
import { setUserCap } from '../../src/db/userCaps.js';
import { describeEachEngine, truncateAll } from '../support/databases.js';
import { enqueue, steppingClock } from './fixtures.js';

describeEachEngine('claimWithinCaps', (getDb) => {
  it('claims in dispatch order, skipping users at their cap, until the global cap', async () => {
    const { db } = getDb();
    const now = steppingClock();
    const a1 = (await enqueue(db, 'alice', now())).session;
    const a2 = (await enqueue(db, 'alice', now())).session;
    const b1 = (await enqueue(db, 'bob', now())).session;
    const c1 = (await enqueue(db, 'carol', now())).session;
    await setUserCap(db, { userId: 'carol', maxRunning: 0, now: now() });
    const caps = { owner: 'node-a', globalCap: 3, defaultUserCap: 1 };

    const first = await claimWithinCaps(db, { ...caps, now: now() });
    expect(first).toMatchObject({ kind: 'claimed', session: { id: a1.id, owner: 'node-a' } });
    const second = await claimWithinCaps(db, { ...caps, now: now() });
    expect(second).toMatchObject({ kind: 'claimed', session: { id: b1.id } });
    expect(await claimWithinCaps(db, { ...caps, now: now() })).toEqual({ kind: 'none_eligible' });
    expect(await claimWithinCaps(db, { ...caps, sessionId: a2.id, now: now() })).toEqual({
      kind: 'at_user_cap',
      userId: 'alice',
      running: 1,
      cap: 1,
    });
    expect(await claimWithinCaps(db, { ...caps, sessionId: c1.id, now: now() })).toMatchObject({
      kind: 'at_user_cap',
      cap: 0,
    });
    await setUserCap(db, { userId: 'alice', maxRunning: 5, now: now() });
    expect(await claimWithinCaps(db, { ...caps, sessionId: a2.id, now: now() })).toMatchObject({
      kind: 'claimed',
      session: { id: a2.id },
    });
    expect(await claimWithinCaps(db, { ...caps, now: now() })).toEqual({
      kind: 'at_global_cap',
      running: 3,
    });
    expect(
      await claimWithinCaps(db, { ...caps, globalCap: 9, sessionId: a2.id, now: now() }),
    ).toMatchObject({ kind: 'not_queued', session: { status: 'running' } });
  });

  it('never exceeds a cap, whatever the interleaving of enqueues, claims and finishes', async () => {
    const { db } = getDb();
    const users = ['u1', 'u2', 'u3'];
    const op = fc.oneof(
      fc.record({ op: fc.constant('enqueue' as const), user: fc.constantFrom(...users) }),
      fc.record({ op: fc.constant('claim' as const) }),
      fc.record({ op: fc.constant('finish' as const), pick: fc.nat() }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(op, { maxLength: 25 }),
        fc.integer({ min: 0, max: 4 }),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 0, max: 3 }),
        async (ops, globalCap, defaultUserCap, u1Cap) => {
          await truncateAll(db);
          const now = steppingClock();
          await setUserCap(db, { userId: 'u1', maxRunning: u1Cap, now: now() });
          const capOf = (u: string) => (u === 'u1' ? u1Cap : defaultUserCap);
          for (const o of ops) {
            if (o.op === 'enqueue') await enqueue(db, o.user, now());
            if (o.op === 'finish') {
              const running = await listRunning(db);
              const s = running[o.pick % Math.max(1, running.length)];
              if (s) {
                await finish(db, {
                  sessionId: s.id,
                  epoch: s.epoch,
                  status: 'succeeded',
                  exitCode: 0,
                  now: now(),
                });
              }
            }
            if (o.op === 'claim') {
              const before = await countRunning(db);
              const queued = await listQueued(db);
              const eligible = queued.find(
                (s) => (before.byUser.get(s.userId) ?? 0) < capOf(s.userId),
              );
              const out = await claimWithinCaps(db, {
                owner: 'n',
                globalCap,
                defaultUserCap,
                now: now(),
              });
              if (before.total >= globalCap) expect(out.kind).toBe('at_global_cap');
              else if (eligible === undefined) expect(out.kind).toBe('none_eligible');
              else expect(out).toMatchObject({ kind: 'claimed', session: { id: eligible.id } });
            }
            const counts = await countRunning(db);
            expect(counts.total).toBeLessThanOrEqual(globalCap);
            for (const [u, n] of counts.byUser) expect(n).toBeLessThanOrEqual(capOf(u));
          }
        },
      ),
      { numRuns: 15 },
    );
  });

  it('holds the caps when two nodes claim at once', async () => {
    const { db, connectAnother } = getDb();
    const other = (await connectAnother()).db;
    const now = steppingClock();
    for (let n = 0; n < 12; n++) await enqueue(db, n % 2 === 0 ? 'alice' : 'bob', now());
    const t = now();
    const attempts = Array.from({ length: 12 }, (_, n) =>
      claimWithinCaps(n % 2 === 0 ? db : other, {
        owner: n % 2 === 0 ? 'node-a' : 'node-b',
        globalCap: 5,
        defaultUserCap: 3,
        now: t,
      }),
    );
    const outcomes = await Promise.all(attempts);
    expect(outcomes.filter((o) => o.kind === 'claimed')).toHaveLength(5);
    const counts = await countRunning(db);
    expect(counts.total).toBe(5);
    for (const n of counts.byUser.values()) expect(n).toBeLessThanOrEqual(3);
  });
});
