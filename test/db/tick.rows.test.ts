/**
 * The tick's reply rows (src/db/sql/rowJson.ts): a tick that asks for
 * arrays (every tick this node sends) and one that does not (an older
 * node's) get the same rows, as arrays and as objects. A change row's
 * task comes without its run spec to a node that says so (every node of
 * this version), with it to an older one.
 */
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { readChanges } from '../../src/db/dispatchReads.js';
import { TASK_COLUMNS } from '../../src/db/sql/rowJson.js';
import { parseTickReply } from '../../src/db/tick.js';
import { tickPayload } from '../../src/db/tickInput.js';
import type { TickInput } from '../../src/db/tickTypes.js';
import type { Db } from '../../src/db/transaction.js';
import { describeEachEngine } from '../support/databases.js';
import { enqueueOp } from './tickFixtures.js';

type Reply = {
  outcomes: { session: unknown; task: unknown }[];
  granted: { session: unknown; task: unknown }[];
  owned: { session: unknown; task: unknown }[] | null;
  lines: unknown[];
};

/** rt_tick's raw reply, as a node of this version (arrays) or an older one (no `rows`) asks. */
async function rawTick(db: Db, input: TickInput, arrays: boolean): Promise<unknown> {
  const { rows: _rows, ...older } = tickPayload(input);
  const payload = arrays ? tickPayload(input) : older;
  const { rows } = await sql<{
    r: unknown;
  }>`SELECT rt_tick(${JSON.stringify(payload)}::jsonb) AS r`.execute(db);
  return rows[0]?.r;
}

const head = { owner: 'n@b', globalCap: 5, defaultUserCap: 1 };

describeEachEngine('tick reply rows', (getDb) => {
  it('an older node gets objects, this one arrays, of the same rows', async () => {
    const { db } = getDb();
    const now = new Date('2026-12-02T06:00:00.123Z');
    const ops = [enqueueOp('alice'), enqueueOp('alice'), enqueueOp('bob')];
    const old = (await rawTick(db, { ...head, now, want: 1, ops }, false)) as Reply;
    expect(old.outcomes[0]?.session).toMatchObject({ user_id: 'alice', status: 'running' });
    expect(old.granted[0]?.task).toMatchObject({ user_id: 'alice' });
    expect(Array.isArray(old.lines[0])).toBe(false);

    const next = { ...head, now, want: 0, ops: [], resync: true };
    const mine = (await rawTick(db, next, true)) as Reply;
    expect(Array.isArray(mine.owned?.[0]?.session)).toBe(true);
    expect(Array.isArray(mine.owned?.[0]?.task)).toBe(true);
    // Read as objects by an older node: the same owned rows, field for field.
    const older = parseTickReply(await rawTick(db, next, false));
    const parsed = parseTickReply(mine);
    expect(parsed.owned).toEqual(older.owned);
    expect(parsed.owned?.[0]?.session).toEqual(parseTickReply(old).granted[0]?.session);

    // A cap op's line and the tick's lines, both ways.
    const cap = { op: 'cap' as const, ref: 'c1', userId: 'bob', maxRunning: 3 };
    const a = parseTickReply(await rawTick(db, { ...head, now, want: 0, ops: [cap] }, true));
    const b = parseTickReply(
      await rawTick(db, { ...head, now, want: 0, ops: [{ ...cap, maxRunning: 3 }] }, false),
    );
    expect(a.outcomes[0]).toMatchObject({ kind: 'cap', line: { userId: 'bob', maxRunning: 3 } });
    expect(b.outcomes[0]).toEqual(a.outcomes[0]);
    expect(a.lines.map((l) => l.userId)).toEqual(['bob']);
  });

  it("a change row's task carries no run spec, unless an older node asks; a grant's always does", async () => {
    const { db } = getDb();
    const now = new Date('2026-12-06T13:00:00.000Z');
    const a = { ...head, owner: 'a@b', now };
    const first = parseTickReply(await rawTick(db, { ...a, want: 0, ops: [] }, true));
    const long = {
      ...enqueueOp('alice'),
      spec: { image: 'alpine:3', command: ['x'.repeat(8_000)] },
    };
    const granted = parseTickReply(await rawTick(db, { ...a, want: 1, ops: [long] }, true));
    // The grant's runner gets the whole task.
    expect(granted.granted[0]?.task.spec.command).toEqual(['x'.repeat(8_000)]);
    // Another node's tick, with what it has seen: A's tick rides its reply.
    const asB = { ...head, owner: 'b@b', now, want: 0, ops: [], since: first.tick };
    const mine = (await rawTick(db, asB, true)) as { changes: { task: unknown[] }[] };
    const { changes_without_spec: _lean, ...olderPayload } = tickPayload(asB);
    const { rows } = await sql<{ r: { changes: { task: unknown[] }[] } }>`
      SELECT rt_tick(${JSON.stringify(olderPayload)}::jsonb) AS r`.execute(db);
    const older = rows[0]!.r;
    // As arrays either way; the spec's slot is null for this node, filled for the older one.
    expect(mine.changes).toHaveLength(1);
    expect(mine.changes[0]?.task[3]).toBeNull();
    // The time limit rides beside the row (migration 25), whose length an older node checks.
    expect(mine.changes[0]?.task).toHaveLength(TASK_COLUMNS.length);
    expect(mine.changes[0]).toHaveProperty('limit', null);
    expect(older.changes[0]?.task[3]).toEqual(long.spec);
    // Parsed, both are the same summary, with no spec kept.
    const parsed = parseTickReply(mine).changes?.[0]?.task;
    expect(parsed).toEqual(parseTickReply(older).changes?.[0]?.task);
    expect(parsed).toMatchObject({ id: long.taskId, title: long.title, userId: 'alice' });
    expect(parsed && 'spec' in parsed).toBe(false);
    // The feed's read never sends one.
    const read = await readChanges(db, first.tick);
    expect(read.sessions.map((c) => c.task)).toEqual([parsed]);
    const { rows: raw } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM tasks WHERE run_spec IS NOT NULL`.execute(db);
    expect(raw[0]?.n).toBe(1);
  });
});
