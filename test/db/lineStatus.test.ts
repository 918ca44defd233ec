import { type KyselyPlugin, sql } from 'kysely';
import { expect, it } from 'vitest';
import { positionsOf } from '../../src/db/dispatchReads.js';
import { readLineStatus } from '../../src/db/lineStatus.js';
import { describeEachEngine, raceTest } from '../support/databases.js';
import { enqueueOp, queueOrder, requeueOp, ticker } from './tickFixtures.js';

describeEachEngine('the rows `status` counts', (getDb, engine) => {
  it('lists the head of the line in grant order, each entry at the place every board shows', async () => {
    const { db } = getDb();
    const tick = ticker(db, { globalCap: 1, defaultUserCap: 1 });
    // ann floods first (one of hers runs), then bo and cy each queue one.
    const ann = ['a1', 'a2', 'a3', 'a4', 'a5'].map((t) => enqueueOp('ann', t));
    const first = await tick(ann, { want: 1 });
    expect(first.granted.map((g) => g.session.userId)).toEqual(['ann']);
    await tick([enqueueOp('bo', 'b1'), enqueueOp('cy', 'c1')]);

    const { head } = await readLineStatus(db, 5);
    // Round robin: the newcomers go ahead of ann's flood, one grant each.
    expect(head.map((e) => e.title)).toEqual(['a2', 'b1', 'c1', 'a3', 'a4']);
    // The order the grants take, read from the rows another way.
    const order = await queueOrder(db);
    const ids = await sessionIdsOf(
      db,
      head.map((e) => e.taskId),
    );
    expect(ids).toEqual(order.slice(0, 5));
    const positions = await positionsOf(db, ids);
    expect(ids.map((id) => positions.get(id))).toEqual([1, 2, 3, 4, 5]);

    // A run the infrastructure ended goes back to the head of its user's
    // line (not behind ann's queued ones, nor behind the newcomers).
    const running = first.granted[0]!.session;
    await tick([requeueOp(running.id, running.epoch)]);
    const again = await readLineStatus(db, 4);
    expect(again.head.map((e) => [e.title, e.attempt])).toEqual([
      ['a1', 2],
      ['a2', 1],
      ['b1', 1],
      ['c1', 1],
    ]);
    expect(
      await sessionIdsOf(
        db,
        again.head.map((e) => e.taskId),
      ),
    ).toEqual((await queueOrder(db)).slice(0, 4));
  });

  raceTest(engine)(
    'reads counts, caps and head in one snapshot: a tick committed between them changes neither',
    async () => {
      const { db, connectAnother } = getDb();
      const tick = ticker(db, { globalCap: 0, defaultUserCap: 1 });
      await tick([enqueueOp('ann', 'a1'), enqueueOp('ann', 'a2')]);
      const other = await connectAnother();
      try {
        const another = ticker(other.db, { globalCap: 0, defaultUserCap: 1 });
        // Another node's tick commits right after the status's first read answers.
        let ticked = false;
        const tickAfterFirstRead: KyselyPlugin = {
          transformQuery: (args) => args.node,
          transformResult: async (args) => {
            if (!ticked) {
              ticked = true;
              await another([enqueueOp('bo', 'b1'), enqueueOp('bo', 'b2')]);
            }
            return args.result;
          },
        };
        const status = await readLineStatus(db.withPlugin(tickAfterFirstRead), 5);
        expect(ticked).toBe(true);
        expect(status.counts).toEqual([{ userId: 'ann', status: 'queued', n: 2 }]);
        expect(status.head.map((e) => e.title)).toEqual(['a1', 'a2']);
        // The tick did commit: the next read sees it.
        expect((await readLineStatus(db, 5)).head.map((e) => e.title)).toEqual([
          'a1',
          'b1',
          'a2',
          'b2',
        ]);
      } finally {
        await other.close();
      }
    },
  );

  it('gives the caps the ticks enforce, and none before a tick wrote them', async () => {
    const { db } = getDb();
    expect((await readLineStatus(db, 5)).enforced).toBeNull();
    const tick = ticker(db, { globalCap: 3, defaultUserCap: 1 });
    await tick([enqueueOp('ann')], { want: 1 });
    expect((await readLineStatus(db, 5)).enforced).toEqual({ globalCap: 3, defaultUserCap: 1 });
    // A node configured otherwise: its tick's caps are the ones in force after it.
    await tick([], { globalCap: 7, defaultUserCap: 2 });
    expect((await readLineStatus(db, 5)).enforced).toEqual({ globalCap: 7, defaultUserCap: 2 });
  });
});

async function sessionIdsOf(
  db: Parameters<typeof readLineStatus>[0],
  taskIds: string[],
): Promise<string[]> {
  const { rows } = await sql<{ task_id: string; id: string }>`
    SELECT task_id, id FROM sessions WHERE status = 'queued' AND task_id = ANY (${taskIds}::text[])`.execute(
    db,
  );
  const byTask = new Map(rows.map((r) => [r.task_id, r.id]));
  return taskIds.map((t) => byTask.get(t) ?? 'missing');
}
