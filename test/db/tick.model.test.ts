/**
 * Model-based: random tick sequences applied to `rt_tick` and to the naive
 * reference model (dispatchModel.ts). After every tick the database's
 * grants, outcomes and positions must equal the model's, and every counter
 * must equal a recount from the rows.
 */
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { positionsOf } from '../../src/db/dispatchReads.js';
import { newId } from '../../src/db/ids.js';
import type { TickOp } from '../../src/db/tickTypes.js';
import { describeEachEngine, truncateAll } from '../support/databases.js';
import { DispatchModel, type Placement } from './dispatchModel.js';
import { enqueueOp, expectConsistent, finishOp, ref, requeueOp, ticker } from './tickFixtures.js';

const USERS = ['u0', 'u1', 'u2', 'u3'];

const plan = fc.record({
  enqueues: fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 4 }),
  finishes: fc.array(fc.record({ pick: fc.nat(), how: fc.constantFrom('ok', 'fail', 'requeue') }), {
    maxLength: 3,
  }),
  cancels: fc.array(fc.record({ pick: fc.nat(), queued: fc.boolean() }), { maxLength: 2 }),
  retries: fc.array(fc.nat(), { maxLength: 2 }),
  caps: fc.array(
    fc.record({
      user: fc.integer({ min: 0, max: 3 }),
      cap: fc.option(fc.integer({ min: 0, max: 3 }), { nil: null }),
    }),
    { maxLength: 1 },
  ),
  defaultCap: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null, freq: 6 }),
  bogus: fc.constantFrom('none', 'none', 'stale', 'not_found'),
  want: fc.integer({ min: 0, max: 4 }),
});
type Plan = typeof plan extends fc.Arbitrary<infer T> ? T : never;

/** Turns a plan into ops against the model's state, applies them to the model, predicts outcomes. */
function interpret(m: DispatchModel, p: Plan) {
  const ops: TickOp[] = [];
  const expected = new Map<string, string>();
  const used = new Set<string>();
  const all = [...m.sessions.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
  const pick = <T extends { id: string }>(list: T[], n: number) => {
    const free = list.filter((s) => !used.has(s.id));
    const s = free[n % Math.max(1, free.length)];
    if (s !== undefined) used.add(s.id);
    return s;
  };
  const running = all.filter((s) => s.status === 'running');
  const queued = all.filter((s) => s.status === 'queued');
  for (const c of p.caps) {
    const op = { op: 'cap' as const, ref: ref('cap'), userId: USERS[c.user]!, maxRunning: c.cap };
    ops.push(op);
    expected.set(op.ref, 'cap');
    if (c.cap === null) m.overrides.delete(op.userId);
    else m.overrides.set(op.userId, c.cap);
  }
  if (p.defaultCap !== null) m.defaultCap = p.defaultCap;
  const requeues: Placement[] = [];
  for (const f of p.finishes) {
    const s = pick(running, f.pick);
    if (s === undefined) continue;
    const op =
      f.how === 'requeue'
        ? requeueOp(s.id, s.epoch)
        : f.how === 'fail'
          ? finishOp(s.id, s.epoch, {
              status: 'failed',
              exitCode: 1,
              reason: 'exit_code',
              column: 'failed',
            })
          : finishOp(s.id, s.epoch);
    ops.push(op);
    expected.set(op.ref, 'applied');
    m.end(s.id, op.status);
    if (op.requeue !== null)
      requeues.push({ id: op.requeue.sessionId, taskId: s.taskId, userId: s.userId });
  }
  if (p.bogus === 'stale') {
    const s = pick(queued, 0);
    if (s !== undefined) {
      const op = finishOp(s.id, s.epoch);
      ops.push(op);
      expected.set(op.ref, 'stale');
    }
  } else if (p.bogus === 'not_found') {
    const op = finishOp(newId('session'), 1);
    ops.push(op);
    expected.set(op.ref, 'not_found');
  }
  m.place(requeues, true);
  for (const c of p.cancels) {
    const s = pick(c.queued ? queued : running, c.pick);
    if (s === undefined) continue;
    const status = s.status as 'queued' | 'running';
    const op = {
      op: 'cancel' as const,
      ref: ref('c'),
      sessionId: s.id,
      expected: { status, epoch: s.epoch },
      reason: 'cancelled by user',
      column: 'failed',
    };
    ops.push(op);
    expected.set(op.ref, 'applied');
    m.end(s.id, 'cancelled');
  }
  const finished = all.filter(
    (s) => (s.status === 'failed' || s.status === 'cancelled') && m.latest(s.taskId)?.id === s.id,
  );
  const retried: Placement[] = [];
  for (const r of p.retries) {
    const s = pick(finished, r);
    if (s === undefined) continue;
    const status = s.status as 'failed' | 'cancelled';
    const op = {
      op: 'retry' as const,
      ref: ref('r'),
      taskId: s.taskId,
      actor: s.userId,
      sessionId: newId('session'),
      expected: { sessionId: s.id, status, epoch: s.epoch },
    };
    ops.push(op);
    expected.set(op.ref, 'applied');
    retried.push({ id: op.sessionId, taskId: s.taskId, userId: s.userId });
  }
  m.place(retried, false);
  const enqueued: Placement[] = [];
  for (const u of p.enqueues) {
    const op = enqueueOp(USERS[u]!);
    ops.push(op);
    expected.set(op.ref, 'applied');
    enqueued.push({ id: op.sessionId, taskId: op.taskId, userId: op.userId });
  }
  m.place(enqueued, false);
  return { ops, expected, grants: m.grant(p.want) };
}

describeEachEngine('tick against the reference model', (getDb) => {
  it('grants, outcomes, positions and counters equal the model after every tick', async () => {
    const { db } = getDb();
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 3 }),
        fc.array(plan, { minLength: 1, maxLength: 12 }),
        async (globalCap, defaultCap, plans) => {
          await truncateAll(db);
          const m = new DispatchModel(globalCap, defaultCap);
          const t = ticker(db, { globalCap });
          for (const p of plans) {
            const { ops, expected, grants } = interpret(m, p);
            const r = await t(ops, { want: p.want, defaultUserCap: m.defaultCap });
            expect(r.granted.map((g) => g.session.id)).toEqual(grants);
            expect(new Map(r.outcomes.map((o) => [o.ref, o.kind]))).toEqual(expected);
            expect(r.running).toBe(m.running());
            const order = m.order();
            for (const o of r.outcomes) {
              if (o.kind !== 'applied') continue;
              if (o.position !== null) expect(o.position).toBe(m.position(o.session.id, order));
              if (o.next) expect(o.next.position).toBe(m.position(o.next.session.id, order));
            }
            const ids = [...m.sessions.keys()];
            const got = await positionsOf(db, ids);
            expect(ids.map((id) => got.get(id))).toEqual(ids.map((id) => m.position(id, order)));
            await expectConsistent(db);
          }
        },
      ),
      { numRuns: 30 },
    );
  }, 240_000);
});
