import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import {
  positionsOf,
  readChanges,
  readLines,
  repairDispatch,
  vacuumDispatch,
} from '../../src/db/dispatchReads.js';
import { ValidationError } from '../../src/db/errors.js';
import { newId } from '../../src/db/ids.js';
import type { Session } from '../../src/db/rows.js';
import { tick } from '../../src/db/tick.js';
import { describeEachEngine } from '../support/databases.js';
import { rowCounts } from './fixtures.js';
import {
  appliedOf,
  enqueueOp,
  expectConsistent,
  finishOp,
  queueOrder,
  ref,
  requeueOp,
  ticker,
} from './tickFixtures.js';

describeEachEngine('tick', (getDb) => {
  it('enqueues, answers exact positions and grants round-robin by turn', async () => {
    const { db } = getDb();
    const t = ticker(db);
    const a = [enqueueOp('alice'), enqueueOp('alice'), enqueueOp('alice')];
    const b = [enqueueOp('bob'), enqueueOp('bob')];
    const first = await t([...a, ...b]);
    expect(first.tick).toBe(1);
    // alice joined first: a0 (0,0) b0 (0,1) a1 (1,0) b1 (1,1) a2 (2,0)
    expect(first.outcomes.map((o) => (o.kind === 'applied' ? o.position : o.kind))).toEqual([
      1, 3, 5, 2, 4,
    ]);
    const applied = appliedOf(first, a[0]!.ref);
    expect(applied.session).toMatchObject({ status: 'queued', attempt: 1, turn: 0, joinSeq: 0 });
    expect(applied.task).toMatchObject({ userId: 'alice', column: 'queued', title: 'a task' });
    await expectConsistent(db);

    const granted = await t([], { want: 3 });
    expect(granted.granted.map((g) => g.session.id)).toEqual([
      a[0]!.sessionId,
      b[0]!.sessionId,
      a[1]!.sessionId,
    ]);
    expect(granted.granted[0]!.session).toMatchObject({
      status: 'running',
      epoch: 1,
      owner: 'node-a@boot1',
    });
    expect(granted.granted[0]!.task.spec.image).toBe('busybox:1.36');
    expect(granted.running).toBe(3);
    expect(granted.lines.map((l) => [l.userId, l.queued, l.running, l.headTurn])).toEqual([
      ['alice', 1, 2, 2],
      ['bob', 1, 1, 1],
    ]);
    const pos = await positionsOf(db, [a[0]!.sessionId, b[1]!.sessionId, a[2]!.sessionId]);
    expect([...pos.values()]).toEqual([0, 1, 2]);
    await expectConsistent(db);
  });

  it('never exceeds a user cap or the global cap, and a cap op changes the line', async () => {
    const { db } = getDb();
    const t = ticker(db, { globalCap: 3, defaultUserCap: 2 });
    const ops = Array.from({ length: 4 }, () => enqueueOp('carol'));
    const capRef = ref('cap');
    const r = await t(
      [...ops, enqueueOp('dave'), { op: 'cap', ref: capRef, userId: 'dave', maxRunning: 0 }],
      {
        want: 10,
      },
    );
    expect(r.granted.map((g) => g.session.userId)).toEqual(['carol', 'carol']);
    const cap = r.outcomes.find((o) => o.ref === capRef);
    expect(cap).toMatchObject({
      kind: 'cap',
      line: { userId: 'dave', maxRunning: 0, hasOverride: true },
    });
    // Unpausing dave: room for one more under the global cap of 3.
    const r2 = await t([{ op: 'cap', ref: ref('cap'), userId: 'dave', maxRunning: null }], {
      want: 10,
    });
    expect(r2.granted.map((g) => g.session.userId)).toEqual(['dave']);
    expect(r2.running).toBe(3);
    await expectConsistent(db);
  });

  it('finishes with output and column, requeues at the head of the line', async () => {
    const { db } = getDb();
    const t = ticker(db, { defaultUserCap: 1 });
    const a = [enqueueOp('alice'), enqueueOp('alice'), enqueueOp('alice')];
    const [first] = (await t(a, { want: 1 })).granted;
    const s = first!.session;
    const fin = requeueOp(s.id, s.epoch);
    const r = await t([fin]);
    const o = appliedOf(r, fin.ref);
    expect(o.session).toMatchObject({ status: 'failed', failureReason: 'container_replaced' });
    expect(o.task?.column).toBe('queued');
    expect(o.next?.session).toMatchObject({ attempt: 2, status: 'queued', taskId: s.taskId });
    expect(o.next?.position).toBe(1);
    expect(await queueOrder(db)).toEqual([
      fin.requeue!.sessionId,
      a[1]!.sessionId,
      a[2]!.sessionId,
    ]);
    await expectConsistent(db);

    const [again] = (await t([], { want: 1 })).granted;
    const done = finishOp(again!.session.id, again!.session.epoch);
    const r2 = await t([done]);
    expect(appliedOf(r2, done.ref).session).toMatchObject({ status: 'succeeded', exitCode: 0 });
    expect(appliedOf(r2, done.ref).task?.column).toBe('done');
    const out = await db
      .selectFrom('session_outputs')
      .selectAll()
      .where('session_id', '=', again!.session.id)
      .executeTakeFirst();
    expect(out).toMatchObject({ text: 'done\n', truncated: false });
    await expectConsistent(db);
  });

  it('cancel keeps turns contiguous and no waiting position grows', async () => {
    const { db } = getDb();
    const t = ticker(db);
    const a = Array.from({ length: 4 }, () => enqueueOp('alice'));
    const b = Array.from({ length: 3 }, () => enqueueOp('bob'));
    await t([...a, ...b]);
    const ids = [...a, ...b].map((o) => o.sessionId);
    const before = await positionsOf(db, ids);
    const c = {
      op: 'cancel' as const,
      ref: ref('c'),
      sessionId: a[1]!.sessionId,
      expected: { status: 'queued' as const, epoch: 0 },
      reason: 'cancelled by user',
      column: 'failed',
    };
    const r = await t([c]);
    expect(appliedOf(r, c.ref).session.status).toBe('cancelled');
    expect(appliedOf(r, c.ref).task?.column).toBe('failed');
    const after = await positionsOf(db, ids);
    for (const id of ids) {
      if (id === a[1]!.sessionId) expect(after.get(id)).toBeNull();
      else expect(after.get(id)!).toBeLessThanOrEqual(before.get(id)!);
    }
    expect(await queueOrder(db)).toEqual(
      [a[0], b[0], a[2], b[1], a[3], b[2]].map((o) => o!.sessionId),
    );
    await expectConsistent(db);
  });

  it('answers stale and not_found per op; the rest of the batch applies', async () => {
    const { db } = getDb();
    const t = ticker(db);
    const e = enqueueOp('alice');
    const [g] = (await t([e], { want: 1 })).granted;
    const wrongEpoch = finishOp(g!.session.id, 0);
    const unknown = finishOp(newId('session'), 1);
    const ok = enqueueOp('bob');
    const r = await t([wrongEpoch, unknown, ok]);
    expect(r.outcomes.map((o) => o.kind)).toEqual(['stale', 'not_found', 'applied']);
    expect(r.outcomes[0]).toMatchObject({ actual: { status: 'running', epoch: 1 } });
    await expectConsistent(db);
  });

  it('rejects a bad op before any SQL, naming its index and field', async () => {
    const { db } = getDb();
    const t = ticker(db);
    const before = await rowCounts(db);
    const bad = { ...enqueueOp('alice'), title: 'x'.repeat(201) };
    await expect(t([enqueueOp('bob'), bad])).rejects.toMatchObject({
      code: 'DB_VALIDATION',
      field: 'ops.1.title',
    });
    await expect(t([{ ...enqueueOp('bob'), extra: 1 } as never])).rejects.toBeInstanceOf(
      ValidationError,
    );
    const dup = enqueueOp('bob');
    await expect(t([dup, { ...enqueueOp('bob'), sessionId: dup.sessionId }])).rejects.toMatchObject(
      {
        field: 'ops.1.sessionId',
      },
    );
    expect(await rowCounts(db)).toEqual(before);
  });

  it('is idempotent: the same tick twice answers applied and writes nothing new', async () => {
    const { db } = getDb();
    const t = ticker(db);
    const e = [enqueueOp('alice'), enqueueOp('bob'), enqueueOp('carol'), enqueueOp('dave')];
    const granted = (await t(e, { want: 2 })).granted.map((g) => g.session);
    const [s, f] = granted as [Session, Session];
    await t([finishOp(f.id, f.epoch, { status: 'failed', exitCode: 1, reason: 'exit_code' })]);
    const handle = {
      op: 'handle' as const,
      ref: ref('h'),
      sessionId: s.id,
      epoch: s.epoch,
      backend: 'simulated' as const,
      handle: 'rt-x',
      startedAt: new Date('2026-07-14T10:00:00Z'),
    };
    const fin = requeueOp(s.id, s.epoch);
    const cancel = {
      op: 'cancel' as const,
      ref: ref('c'),
      sessionId: e[3]!.sessionId,
      expected: { status: 'queued' as const, epoch: 0 },
      reason: 'cancelled by user',
      column: 'failed',
    };
    const retry = {
      op: 'retry' as const,
      ref: ref('r'),
      taskId: f.taskId,
      actor: null,
      sessionId: newId('session'),
      expected: { sessionId: f.id, status: 'failed' as const, epoch: f.epoch },
    };
    const cap = { op: 'cap' as const, ref: ref('cap'), userId: 'erin', maxRunning: 4 };
    const input = t.input([handle, fin, cancel, retry, cap, enqueueOp('carol')]);
    const first = await tick(db, input);
    expect(first.outcomes.map((o) => o.kind)).toEqual([
      'applied',
      'applied',
      'applied',
      'applied',
      'cap',
      'applied',
    ]);
    const counts = await rowCounts(db);
    const second = await tick(db, input);
    expect(second.outcomes.map((o) => o.kind)).toEqual(first.outcomes.map((o) => o.kind));
    expect(appliedOf(second, fin.ref).next?.session.id).toBe(fin.requeue!.sessionId);
    expect(appliedOf(second, retry.ref).session.id).toBe(retry.sessionId);
    expect(second.tick).toBe(first.tick);
    expect(await rowCounts(db)).toEqual(counts);
    await expectConsistent(db);
  });

  it('retries a finished task at the back of the line, compare-and-set on the latest attempt', async () => {
    const { db } = getDb();
    const t = ticker(db);
    const e = enqueueOp('alice');
    const [g] = (await t([e, enqueueOp('alice')], { want: 1 })).granted;
    await t([
      finishOp(g!.session.id, 1, {
        status: 'failed',
        exitCode: 2,
        reason: 'exit_code',
        column: 'failed',
      }),
    ]);
    const retry = (actor: string | null) => ({
      op: 'retry' as const,
      ref: ref('r'),
      taskId: e.taskId,
      actor,
      sessionId: newId('session'),
      expected: { sessionId: g!.session.id, status: 'failed' as const, epoch: 1 },
    });
    const other = retry('mallory');
    const ok = retry('alice');
    const twice = retry(null);
    const r = await t([other, ok, twice]);
    expect(r.outcomes.map((o) => o.kind)).toEqual(['not_found', 'applied', 'stale']);
    expect(appliedOf(r, ok.ref)).toMatchObject({
      position: 2,
      session: { attempt: 2 },
      task: { column: 'queued' },
    });
    await expectConsistent(db);
  });

  it('resync lists what the owner runs; readChanges and readLines feed the board', async () => {
    const { db } = getDb();
    const t = ticker(db);
    await t([enqueueOp('alice'), enqueueOp('bob'), enqueueOp('bob')], { want: 2 });
    const since = (await readChanges(db, 0)).tick;
    const r = await t([], { resync: true, owner: 'node-a@boot1' });
    expect(r.owned?.map((o) => o.session.userId).sort()).toEqual(['alice', 'bob']);
    const [g] = r.owned!;
    await t([finishOp(g!.session.id, g!.session.epoch)]);
    const changes = await readChanges(db, since);
    expect(changes.sessions.map((c) => c.session.id)).toEqual([g!.session.id]);
    expect(changes.lines.map((l) => l.userId)).toEqual([g!.session.userId]);
    expect(changes.running).toBe(1);
    expect((await readLines(db)).length).toBe(g!.session.userId === 'alice' ? 1 : 2);
  });

  it("readChanges with tailChars brings a finished run's stored tail, null when it stored none", async () => {
    const { db } = getDb();
    const t = ticker(db);
    const ops = [enqueueOp('alice'), enqueueOp('bob'), enqueueOp('carol')];
    const r = await t(ops, { want: 2 });
    const since = r.tick;
    const [a, b] = r.granted;
    await t([
      finishOp(a!.session.id, a!.session.epoch, {
        output: { text: 'first\nsecond\nthird\n', totalBytes: 19, truncated: false },
      }),
      finishOp(b!.session.id, b!.session.epoch, { output: null }),
    ]);
    const changes = await readChanges(db, since, { tailChars: 8 });
    const byId = new Map(changes.sessions.map((c) => [c.session.id, c]));
    expect(byId.get(a!.session.id)?.output).toEqual({ tail: 'd\nthird\n', whole: false });
    expect(byId.get(b!.session.id)?.output).toBeNull();
    // Without the option the read is as before: no tails.
    const plain = await readChanges(db, since);
    expect(plain.sessions.every((c) => !('output' in c))).toBe(true);
    // A queued or running attempt carries no tail (its output is live).
    const all = await readChanges(db, 0, { tailChars: 8 });
    const carol = all.sessions.find((c) => c.task.userId === 'carol');
    expect(carol?.session.status).toBe('queued');
    expect(carol && 'output' in carol).toBe(false);
    await expect(readChanges(db, 0, { tailChars: 0 })).rejects.toBeInstanceOf(ValidationError);
  });

  it("with since, a tick's reply carries what other ticks changed after it, as the feed would read it", async () => {
    const { db } = getDb();
    const a = ticker(db, { owner: 'node-a@boot1' });
    const b = ticker(db, { owner: 'node-b@boot1' });
    const first = await a([enqueueOp('alice'), enqueueOp('bob')], { want: 1 });
    const [run] = first.granted;
    const ended = await a([
      finishOp(run!.session.id, run!.session.epoch, {
        output: { text: 'one\ntwo\n', totalBytes: 8, truncated: false },
      }),
    ]);
    // B has seen everything up to A's first tick: A's second one rides B's tick.
    const carol = enqueueOp('carol');
    const r = await b([carol], { since: first.tick, tailChars: 100 });
    expect(r.tick).toBe(ended.tick + 1);
    expect(r.changes?.map((c) => [c.session.id, c.session.status, c.output])).toEqual([
      [run!.session.id, 'succeeded', { tail: 'one\ntwo\n', whole: true }],
    ]);
    // Exactly what the feed's read of the same ticks says (carol is B's own, in its outcomes).
    const feed = await readChanges(db, first.tick, { tailChars: 100 });
    expect(feed.sessions.filter((c) => c.session.id !== carol.sessionId)).toEqual(r.changes);
    // The lines since then: alice's (A's finish) and carol's (this tick).
    expect(r.lines.map((l) => l.userId)).toEqual(['alice', 'carol']);
    // Caught up: nothing rides along, and the lines are this tick's only.
    const next = await b([enqueueOp('dave')], { since: r.tick });
    expect(next.changes).toBeUndefined();
    expect(next.lines.map((l) => l.userId)).toEqual(['dave']);
    // A tick that changes nothing still answers what it has not seen.
    const idle = await a([], { since: ended.tick });
    expect(idle.changed).toBe(false);
    expect(idle.changes?.map((c) => c.task.userId).sort()).toEqual(['carol', 'dave']);
    // Without since the reply is as it always was.
    expect((await b([])).changes).toBeUndefined();
    await expect(b([], { since: -1 })).rejects.toBeInstanceOf(ValidationError);
  });

  it('with changesMax, a larger change set is flagged instead of riding, and the feed reads it all', async () => {
    const { db } = getDb();
    const a = ticker(db, { owner: 'node-a@boot1' });
    const b = ticker(db, { owner: 'node-b@boot1' });
    const start = await a([enqueueOp('alice')]);
    // Three sessions change after `start` in A's ticks: two new, one granted.
    const more = await a([enqueueOp('bob'), enqueueOp('carol')], { want: 1 });
    expect(more.granted).toHaveLength(1);
    const late = await b([enqueueOp('dave')], { since: start.tick, changesMax: 2 });
    expect(late.changes).toBeUndefined();
    expect(late.changesDeferred).toBe(true);
    // The lines still ride: alice's (granted), bob's, carol's and B's own dave.
    expect(late.lines.map((l) => l.userId)).toEqual(['alice', 'bob', 'carol', 'dave']);
    // What the feed then reads apart is every change up to B's tick, B's own included.
    const read = await readChanges(db, start.tick);
    expect(read.tick).toBe(late.tick);
    expect(read.sessions.map((c) => c.task.userId).sort()).toEqual([
      'alice',
      'bob',
      'carol',
      'dave',
    ]);
    // B applied its own tick's reply: told so, the read leaves dave out (lines stay).
    const skipped = await readChanges(db, start.tick, { skipTicks: [late.tick] });
    expect(skipped.sessions.map((c) => c.task.userId).sort()).toEqual(['alice', 'bob', 'carol']);
    expect(skipped.lines).toEqual(read.lines);
    // At the bound they still ride, exactly what they rode without one.
    const again = await b([], { since: start.tick, changesMax: 4 });
    const plain = await b([], { since: start.tick });
    expect(again.changesDeferred).toBeUndefined();
    expect(again.changes?.map((c) => c.session.id)).toEqual(
      plain.changes?.map((c) => c.session.id),
    );
    expect(again.changes).toHaveLength(4);
    // Caught up: nothing to flag. 0 flags any change at all.
    expect((await b([], { since: late.tick, changesMax: 0 })).changesDeferred).toBeUndefined();
    expect((await b([], { since: start.tick, changesMax: 0 })).changesDeferred).toBe(true);
    await expect(b([], { since: start.tick, changesMax: -1 })).rejects.toBeInstanceOf(
      ValidationError,
    );
    // Only a session whose latest change is in a skipped tick: bob, granted since, is read again.
    const granted = await a([], { want: 1 });
    expect(granted.granted.map((g) => g.task.userId)).toEqual(['bob']);
    const after = await readChanges(db, start.tick, { skipTicks: [more.tick, late.tick] });
    expect(after.sessions.map((c) => c.task.userId)).toEqual(['bob']);
    await expect(readChanges(db, 0, { skipTicks: [-1] })).rejects.toBeInstanceOf(ValidationError);
  });

  it('repairs drift: rows written outside ticks, counters off', async () => {
    const { db } = getDb();
    const t = ticker(db);
    await t([enqueueOp('alice'), enqueueOp('alice')]);
    await sql`UPDATE user_lines SET queued = 7, running = 3`.execute(db);
    await sql`UPDATE dispatch_state SET running = 5`.execute(db);
    await sql`UPDATE sessions SET turn = NULL`.execute(db);
    const fixed = await repairDispatch(db);
    expect(fixed).toEqual(['renumbered alice', 'line alice', 'running 5 -> 0']);
    await expectConsistent(db);
    expect(await repairDispatch(db)).toEqual([]);
  });

  it('vacuums the dispatch tables (outside a transaction only)', async () => {
    const { db } = getDb();
    const t = ticker(db);
    for (let i = 0; i < 5; i++) await t([enqueueOp('alice')], { want: 1 });
    await vacuumDispatch(db);
    await expect(db.transaction().execute((tx) => vacuumDispatch(tx))).rejects.toBeInstanceOf(
      ValidationError,
    );
    await expectConsistent(db);
  });
});

describe('tick input', () => {
  it('needs a reason for a failure and a failure for a requeue', async () => {
    const db = null as never;
    const s = newId('session');
    const base = { owner: 'n@b', now: new Date(), globalCap: 1, defaultUserCap: 1, want: 0 };
    await expect(
      tick(db, { ...base, ops: [finishOp(s, 1, { status: 'failed', reason: null })] }),
    ).rejects.toMatchObject({ field: 'ops.0.reason' });
    await expect(
      tick(db, { ...base, ops: [finishOp(s, 1, { requeue: { sessionId: newId('session') } })] }),
    ).rejects.toMatchObject({ field: 'ops.0.requeue' });
  });
});
