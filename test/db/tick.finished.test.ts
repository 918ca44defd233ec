/**
 * A finish that applied with no requeue is answered as its phase ends, from
 * the row that phase read (the reply's `finished`, asked for by the node):
 * the same outcome it would have had at the end of the tick, since nothing
 * later in the tick writes a finished session, and with no retry in the
 * tick nothing rewrites its card. A tick with a retry answers its finishes
 * at the end, and an older node that does not ask gets them there too.
 */
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { newId } from '../../src/db/ids.js';
import { getSession } from '../../src/db/sessionQueries.js';
import { getTask } from '../../src/db/tasks.js';
import { parseTickReply } from '../../src/db/tick.js';
import { tickPayload } from '../../src/db/tickInput.js';
import type { TickOutcome } from '../../src/db/tickTypes.js';
import type { Db } from '../../src/db/transaction.js';
import { describeEachEngine } from '../support/databases.js';
import {
  appliedOf,
  enqueueOp,
  expectConsistent,
  finishOp,
  handleOp,
  ref,
  requeueOp,
  ticker,
} from './tickFixtures.js';

/** Every applied outcome's rows, as the store holds them after the tick. */
async function expectRowsOfStore(db: Db, outcomes: readonly TickOutcome[]): Promise<void> {
  for (const o of outcomes) {
    if (o.kind !== 'applied') continue;
    expect(o.session).toEqual(await getSession(db, o.session.id));
    if (o.task !== null) expect(o.task).toEqual(await getTask(db, o.task.id));
  }
}

describeEachEngine('tick: finishes answered as their phase ends', (getDb) => {
  it("answers each op in op order with the rows the tick left, the requeue's next attempt included", async () => {
    const { db } = getDb();
    const t = ticker(db, { defaultUserCap: 1 });
    const users = ['ann', 'bob', 'cy', 'dee'];
    const { granted } = await t(
      users.map((u) => enqueueOp(u)),
      { want: 4 },
    );
    const [a, b, c, d] = granted.map((g) => g.session);
    if (a === undefined || b === undefined || c === undefined || d === undefined)
      throw new Error('not all granted');
    await t([enqueueOp('ann'), enqueueOp('cy')]);
    const ops = [
      finishOp(a.id, a.epoch),
      handleOp(b.id, b.epoch),
      finishOp(b.id, b.epoch, {
        status: 'failed',
        exitCode: 3,
        reason: 'exit_code',
        column: 'failed',
      }),
      requeueOp(c.id, c.epoch),
      finishOp(d.id, d.epoch + 1),
    ];
    const r = await t(ops, { want: 4 });
    expect(r.outcomes.map((o) => [o.ref, o.kind])).toEqual(
      ops.map((o) => [o.ref, o.ref === ops[4]?.ref ? 'stale' : 'applied']),
    );
    expect(appliedOf(r, ops[0]!.ref)).toMatchObject({
      session: { status: 'succeeded' },
      task: { column: 'done' },
      position: null,
    });
    expect(appliedOf(r, ops[1]!.ref).session).toBe(appliedOf(r, ops[2]!.ref).session);
    expect(appliedOf(r, ops[3]!.ref).next?.session.status).toMatch(/queued|running/);
    await expectRowsOfStore(db, r.outcomes);
    await expectConsistent(db);
  });

  it('with a retry in the tick, a finish is answered with the card the retry left', async () => {
    const { db } = getDb();
    const t = ticker(db, { defaultUserCap: 1 });
    const [g] = (await t([enqueueOp('ann')], { want: 1 })).granted;
    if (g === undefined) throw new Error('nothing granted');
    const fin = finishOp(g.session.id, g.session.epoch, {
      status: 'failed',
      exitCode: 1,
      reason: 'exit_code',
      column: 'failed',
    });
    const retry = {
      op: 'retry' as const,
      ref: ref('r'),
      taskId: g.task.id,
      actor: null,
      sessionId: newId('session'),
      expected: { sessionId: g.session.id, status: 'failed' as const, epoch: g.session.epoch },
    };
    const r = await t([fin, retry]);
    // Answered at the end of the tick: the retry put the card back in line.
    expect(appliedOf(r, fin.ref).task).toMatchObject({ column: 'queued' });
    await expectRowsOfStore(db, r.outcomes);
  });

  it('an older node, which does not ask, gets its finishes among the outcomes', async () => {
    const { db } = getDb();
    const t = ticker(db, { defaultUserCap: 1 });
    const [g] = (await t([enqueueOp('ann')], { want: 1 })).granted;
    if (g === undefined) throw new Error('nothing granted');
    const fin = finishOp(g.session.id, g.session.epoch);
    const { finished: _asked, ...older } = tickPayload(t.input([fin]));
    const { rows } = await sql<{
      r: { finished: unknown; outcomes: Array<{ ref: string }> };
    }>`SELECT rt_tick(${JSON.stringify(older)}::jsonb) AS r`.execute(db);
    const reply = rows[0]?.r;
    expect(reply?.finished).toBeNull();
    expect(reply?.outcomes.map((o) => o.ref)).toEqual([fin.ref]);
    const parsed = parseTickReply(reply);
    expect(appliedOf(parsed, fin.ref).session).toEqual(await getSession(db, g.session.id));
  });
});
