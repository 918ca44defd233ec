/**
 * A grant this node's pool made, refused by the database (`claimWithinCaps`
 * answers at_cap: another node took the room): the runner gives the slot
 * back and the pool re-reads the rows, which count the other node's run, so
 * the index and the rows agree again; the session keeps waiting, queued,
 * and runs once the room is really free.
 */
import { afterEach, expect, test } from 'vitest';
import { beat, claim, createTaskWithSession, finish } from '../../src/db/index.js';
import { createTestRuntime, type TestRuntime } from '../../src/testing/index.js';
import { describeEachEngine } from '../support/databases.js';

let h: TestRuntime | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describeEachEngine('runtime: a claim refused at the cap', (getDb) => {
  test('gives the slot back, the pool matches the rows again, and the session runs when room frees', async () => {
    const { db } = getDb();
    h = await createTestRuntime({ db, caps: { maxRunning: 1, defaultUserCap: 1 }, pollMs: 5_000 });
    // Another node, alive (it beats), claims the only slot behind this node's back.
    const at = () => new Date(h?.clock.now() ?? 0);
    const other = await createTaskWithSession(db, {
      userId: 'zed',
      title: 'elsewhere',
      spec: { image: 'runner:v1', command: ['agent', '30'] },
      now: at(),
    });
    const foreign = await claim(db, {
      sessionId: other.session.id,
      epoch: 0,
      owner: 'other@x1',
      now: at(),
    });
    await beat(db, { owner: 'other@x1', nodeId: 'other', now: at() });

    const { sessionId } = await h.runtime.createTask('ann', {
      title: 'here',
      image: 'runner:v1',
      command: ['agent', '20'],
    });
    await h.settle();
    const rows = await h.sessions();
    expect(rows.find((s) => s.id === sessionId)?.status).toBe('queued');
    expect((await h.events(sessionId)).map((e) => e.to)).toEqual(['queued']);
    // Index == rows: the other node's run holds the slot, ann waits.
    expect(h.runtime.poolSnapshot()).toMatchObject({ running: 1, queued: 1 });
    expect(h.runtime.poolSnapshot().users).toEqual([
      { userId: 'ann', running: 0, queued: 1, maxRunning: null },
      { userId: 'zed', running: 1, queued: 0, maxRunning: null },
    ]);
    await h.advance(10_000); // the runner backs off a poll and waits again: no second refusal
    expect(h.runtime.poolSnapshot()).toMatchObject({ running: 1, queued: 1 });

    await finish(db, {
      sessionId: foreign.id,
      epoch: foreign.epoch,
      status: 'succeeded',
      exitCode: 0,
      now: at(),
    });
    await h.runtime.reconcile(); // step 4 re-reads the rows: the room is free
    await h.advance(30_000);
    expect((await h.sessions()).find((s) => s.id === sessionId)?.status).toBe('succeeded');
    expect(h.runtime.poolSnapshot()).toMatchObject({ running: 0, queued: 0 });
    expect(h.errors).toEqual([]);
  });
});
