/**
 * Submission keys (migration 23, src/db/sql/rtTickAppend.ts): an enqueue
 * with a key one of the user's tasks already has queues nothing and
 * answers that task, replayed; the same key with another title or spec is
 * stale ("key in use by <task>"). Checked tick by tick, within one tick,
 * against a retried tick, racing from two connections, and as a property
 * against a model over random batches.
 */
import fc from 'fast-check';
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { tick } from '../../src/db/tick.js';
import type { TickEnqueue, TickOutcome, TickResult } from '../../src/db/tickTypes.js';
import type { Db } from '../../src/db/transaction.js';
import { describeEachEngine, raceTest } from '../support/databases.js';
import {
  appliedOf,
  enqueueOp,
  expectConsistent,
  finishOp,
  handleOp,
  ticker,
} from './tickFixtures.js';

const keyed = (userId: string, key: string, title = 'a task'): TickEnqueue => ({
  ...enqueueOp(userId, title),
  key,
});

const tasksOf = async (db: Db, userId: string) =>
  (
    await sql<{ id: string; submit_key: string | null }>`
      SELECT id, submit_key FROM tasks WHERE user_id = ${userId} ORDER BY created_at, id`.execute(
      db,
    )
  ).rows;

const outcomeOf = (r: TickResult, ref: string): TickOutcome => {
  const o = r.outcomes.find((x) => x.ref === ref);
  if (o === undefined) throw new Error(`no outcome for ${ref}`);
  return o;
};

describeEachEngine('tick: submission keys', (getDb, engine) => {
  it('a key queues one task; the same key again answers it, replayed, and queues nothing', async () => {
    const { db } = getDb();
    const t = ticker(db, { defaultUserCap: 1 });
    await t([enqueueOp('kim'), enqueueOp('kim')]);
    const first = keyed('kim', 'order-17');
    const a = appliedOf(await t([first]), first.ref);
    expect(a.replayed).toBeUndefined();
    expect(a).toMatchObject({ position: 3, session: { id: first.sessionId } });

    const again = keyed('kim', 'order-17');
    const b = appliedOf(await t([again]), again.ref);
    expect(b.replayed).toBe(true);
    expect(b.session.id).toBe(first.sessionId);
    expect(b.task?.id).toBe(first.taskId);
    expect(b.position).toBe(3);
    expect((await tasksOf(db, 'kim')).map((r) => r.submit_key)).toEqual([null, null, 'order-17']);
    await expectConsistent(db);

    // Granted, run and finished: a replay answers the finished attempt.
    const grants = await t([], { want: 1, globalCap: 1 });
    const held = grants.granted[0]!.session;
    await t([handleOp(held.id, held.epoch), finishOp(held.id, held.epoch)]);
    const later = keyed('kim', 'order-17');
    const c = appliedOf(await t([later]), later.ref);
    expect(c).toMatchObject({ replayed: true, session: { id: first.sessionId } });
    expect((await tasksOf(db, 'kim')).length).toBe(3);
  });

  it('the same key with another title or spec is stale and names the task; keys are per user', async () => {
    const { db } = getDb();
    const t = ticker(db);
    const first = keyed('lee', 'k1');
    await t([first]);
    const title = keyed('lee', 'k1', 'another title');
    const spec = { ...keyed('lee', 'k1'), spec: { image: 'other', command: ['true'] } };
    const other = keyed('max', 'k1');
    const r = await t([title, spec, other]);
    for (const op of [title, spec]) {
      expect(outcomeOf(r, op.ref)).toEqual({
        ref: op.ref,
        kind: 'stale',
        actual: { status: `key in use by ${first.taskId}`, epoch: 0 },
      });
    }
    expect(appliedOf(r, other.ref).replayed).toBeUndefined();
    expect((await tasksOf(db, 'lee')).length).toBe(1);
    expect((await tasksOf(db, 'max')).length).toBe(1);
    await expectConsistent(db);
  });

  it('within one tick the first enqueue of a key queues; the others answer it or are stale', async () => {
    const { db } = getDb();
    const t = ticker(db);
    const ops = [keyed('ona', 'dup'), keyed('ona', 'dup'), keyed('ona', 'dup', 'changed')];
    const r = await t(ops);
    expect(appliedOf(r, ops[0]!.ref).replayed).toBeUndefined();
    expect(appliedOf(r, ops[1]!.ref)).toMatchObject({
      replayed: true,
      session: { id: ops[0]!.sessionId },
      task: { id: ops[0]!.taskId },
    });
    expect(outcomeOf(r, ops[2]!.ref)).toMatchObject({
      kind: 'stale',
      actual: { status: `key in use by ${ops[0]!.taskId}` },
    });
    expect((await tasksOf(db, 'ona')).length).toBe(1);
    await expectConsistent(db);
  });

  it('a tick retried after its commit answers its own enqueue as applied, not replayed', async () => {
    const { db } = getDb();
    const input = {
      owner: 'node-a@boot1',
      now: new Date('2026-07-14T10:00:00Z'),
      globalCap: 20,
      defaultUserCap: 2,
      want: 0,
      ops: [keyed('pia', 'once')],
    };
    const first = await tick(db, input);
    const retried = await tick(db, input);
    const ref = input.ops[0]!.ref;
    expect(appliedOf(retried, ref).replayed).toBeUndefined();
    expect(appliedOf(retried, ref).session).toEqual(appliedOf(first, ref).session);
    expect((await tasksOf(db, 'pia')).length).toBe(1);
  });

  it('a malformed key is refused before any SQL runs', async () => {
    const { db } = getDb();
    for (const key of ['', 'two words', 'x'.repeat(256), 'tab\there', 'é']) {
      await expect(
        tick(db, {
          owner: 'n@b',
          now: new Date(),
          globalCap: 1,
          defaultUserCap: 1,
          want: 0,
          ops: [keyed('quin', key)],
        }),
      ).rejects.toMatchObject({ code: 'DB_VALIDATION' });
    }
    expect(await tasksOf(db, 'quin')).toEqual([]);
    // And the store's own CHECK says the same to any other writer.
    for (const key of ['two words', 'x'.repeat(256), 'é']) {
      await expect(
        sql`INSERT INTO tasks (id, user_id, title, run_spec, board_column, created_at, updated_at, submit_key)
          VALUES (${enqueueOp('quin').taskId}, 'quin', 't', '{}', 'queued', now(), now(), ${key})`.execute(
          db,
        ),
      ).rejects.toThrow(/check constraint/);
    }
  });

  raceTest(engine)('two connections racing one key make one task', async () => {
    const { db, connectAnother } = getDb();
    const other = await connectAnother();
    try {
      for (let round = 0; round < 15; round++) {
        const key = `race-${round}`;
        const ops = [keyed('ray', key), keyed('ray', key)];
        const head = { owner: 'n@b', globalCap: 20, defaultUserCap: 20, want: 0 };
        const [x, y] = await Promise.all([
          tick(db, { ...head, now: new Date(), ops: [ops[0]!] }),
          tick(other.db, { ...head, now: new Date(), ops: [ops[1]!] }),
        ]);
        const answers = [appliedOf(x, ops[0]!.ref), appliedOf(y, ops[1]!.ref)];
        expect(answers.filter((a) => a.replayed === true).length).toBe(1);
        expect(new Set(answers.map((a) => a.task?.id)).size).toBe(1);
      }
      expect((await tasksOf(db, 'ray')).length).toBe(15);
      await expectConsistent(db);
    } finally {
      await other.close();
    }
  });

  it('answers as a model of first-submission-wins over random batches (property)', async () => {
    const { db } = getDb();
    let run = 0;
    const submission = fc.record({
      user: fc.constantFrom('u1', 'u2'),
      key: fc.option(fc.constantFrom('a', 'b', 'c'), { nil: undefined }),
      title: fc.constantFrom('t1', 't2'),
      cut: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(submission, { minLength: 1, maxLength: 14 }), async (subs) => {
        run += 1;
        const t = ticker(db);
        // The model: the first submission of a (user, key) names its task.
        const named = new Map<string, { taskId: string; title: string }>();
        let batch: { op: TickEnqueue; expect: 'new' | 'replay' | 'stale'; of?: string }[] = [];
        let made = 0;
        const flush = async () => {
          if (batch.length === 0) return;
          const r = await t(batch.map((b) => b.op));
          for (const b of batch) {
            const o = outcomeOf(r, b.op.ref);
            if (b.expect === 'stale') {
              expect(o).toMatchObject({
                kind: 'stale',
                actual: { status: `key in use by ${b.of}` },
              });
            } else {
              expect(o.kind).toBe('applied');
              if (o.kind !== 'applied') return;
              expect(o.replayed).toBe(b.expect === 'replay' ? true : undefined);
              expect(o.task?.id).toBe(b.expect === 'new' ? b.op.taskId : b.of);
            }
          }
          batch = [];
        };
        for (const s of subs) {
          const user = `${s.user}-${engine}-${run}`;
          const op = s.key === undefined ? enqueueOp(user, s.title) : keyed(user, s.key, s.title);
          const id = `${user}\n${s.key}`;
          const seen = s.key === undefined ? undefined : named.get(id);
          if (seen === undefined) {
            if (s.key !== undefined) named.set(id, { taskId: op.taskId, title: s.title });
            made += 1;
            batch.push({ op, expect: 'new' });
          } else {
            batch.push({
              op,
              expect: seen.title === s.title ? 'replay' : 'stale',
              of: seen.taskId,
            });
          }
          if (s.cut) await flush();
        }
        await flush();
        const rows = await sql<{ n: number }>`
          SELECT count(*)::int AS n FROM tasks WHERE user_id LIKE ${`%-${engine}-${run}`}`.execute(
          db,
        );
        expect(rows.rows[0]?.n).toBe(made);
      }),
      { numRuns: 40, seed: 1523, endOnFailure: true },
    );
    await expectConsistent(db);
  });
});
