import { expect, it } from 'vitest';
import { rowsTick } from '../../src/cli/rowsTick.js';
import { formatStatus, readStatus } from '../../src/cli/statusReport.js';
import { readEnforcedCaps } from '../../src/db/dispatchReads.js';
import { enqueueOp, ticker } from '../db/tickFixtures.js';
import { describeEachEngine } from '../support/databases.js';

// What `status` and `enqueue` run with none of the nodes' flags: the defaults.
const configured = { maxRunning: 4, defaultUserCap: 2 };

describeEachEngine('`status` from the rows', (getDb) => {
  it('shows the caps the nodes enforce and the line in grant order, not its own settings or the enqueue order', async () => {
    const { db } = getDb();
    // The nodes run with one runner, one per user: ann's first is granted.
    const node = ticker(db, { globalCap: 1, defaultUserCap: 1 });
    await node(
      ['a1', 'a2', 'a3'].map((t) => enqueueOp('ann', t)),
      { want: 1 },
    );
    // bo queues through the CLI, with no node answering for its directory.
    const bo = await rowsTick(db, { caps: configured }, enqueueOp('bo', 'b1'));
    expect(bo).toMatchObject({ kind: 'applied', position: 2 });

    const report = await readStatus(db, 'rows', configured);
    expect([report.maxRunning, report.capsFrom]).toEqual([1, 'nodes']);
    expect(report.users.map((u) => [u.userId, u.cap, u.queued, u.running])).toEqual([
      ['ann', 1, 2, 1],
      ['bo', 1, 1, 0],
    ]);
    expect(report.head.map((e) => [e.position, e.title])).toEqual([
      [1, 'a2'],
      [2, 'b1'],
      [3, 'a3'],
    ]);
    expect(formatStatus(report)).toContain('line: 3 waiting, 1 of 1 runners held');
  });

  it('keeps the caps in force when the CLI writes the rows, and uses its own only until a node has ticked', async () => {
    const { db } = getDb();
    // A store no node has run on: the CLI's settings are written, but they
    // are nobody's caps in force (a node starting with others is not warned).
    await rowsTick(db, { caps: { maxRunning: 5, defaultUserCap: 2 } }, enqueueOp('ann'));
    expect(await readEnforcedCaps(db)).toBeNull();
    const before = await readStatus(db, 'rows', configured);
    expect([before.maxRunning, before.capsFrom]).toEqual([4, 'settings']);
    expect(formatStatus(before)).toContain(
      '0 of 4 runners held (caps: this command’s settings, no node has run here yet)',
    );
    const node = ticker(db, { globalCap: 6, defaultUserCap: 3 });
    await node([]);
    await node([enqueueOp('bo')]);
    await rowsTick(db, { caps: configured }, enqueueOp('cy'));
    expect(await readEnforcedCaps(db)).toEqual({ globalCap: 6, defaultUserCap: 3 });
  });
});
