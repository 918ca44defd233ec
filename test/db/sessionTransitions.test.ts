import { fc } from '@fast-check/vitest';
import { expect, it } from 'vitest';
import { NotFoundError, StaleStatusError, ValidationError } from '../../src/db/errors.js';
import { newId } from '../../src/db/ids.js';
import { getSession, listSessionEvents, listSessionsForTask } from '../../src/db/sessionQueries.js';
import {
  adopt,
  cancel,
  claim,
  finish,
  recordHandle,
  requeue,
} from '../../src/db/sessionTransitions.js';
import { describeEachEngine, raceTest } from '../support/databases.js';
import { enqueue, rowCounts, steppingClock } from './fixtures.js';

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describeEachEngine('session transitions', (getDb, engine) => {
  it('walks queued -> running -> succeeded, fencing with the epoch, one event per change', async () => {
    const { db } = getDb();
    const now = steppingClock();
    const { session } = await enqueue(db, 'alice', now());
    expect(session).toMatchObject({ status: 'queued', epoch: 0, attempt: 1, owner: null });

    const t = now();
    const running = await claim(db, { sessionId: session.id, epoch: 0, owner: 'node-a', now: t });
    expect(running).toMatchObject({ status: 'running', epoch: 1, owner: 'node-a', claimedAt: t });
    expect(running.startedAt).toBeNull();

    const exec = now();
    const handled = await recordHandle(db, {
      sessionId: session.id,
      epoch: 1,
      backend: 'swarm',
      handle: 'rt-ses-1',
      startedAt: exec,
      now: exec,
    });
    expect(handled).toMatchObject({ backend: 'swarm', handle: 'rt-ses-1', startedAt: exec });

    const done = await finish(db, {
      sessionId: session.id,
      epoch: 1,
      status: 'succeeded',
      exitCode: 0,
      now: now(),
    });
    expect(done).toMatchObject({ status: 'succeeded', exitCode: 0, failureReason: null });
    expect(done.finishedAt).not.toBeNull();

    const events = await listSessionEvents(db, session.id);
    expect(events.map((e) => [e.from, e.to, e.epoch, e.node])).toEqual([
      [null, 'queued', 0, null],
      ['queued', 'running', 1, 'node-a'],
      ['running', 'succeeded', 1, 'node-a'],
    ]);
  });

  it('refuses a stale epoch or status with a typed StaleStatusError and writes nothing', async () => {
    const { db } = getDb();
    const now = steppingClock();
    const { session } = await enqueue(db, 'alice', now());
    await claim(db, { sessionId: session.id, epoch: 0, owner: 'node-a', now: now() });
    await adopt(db, { sessionId: session.id, epoch: 1, owner: 'node-b', now: now() });
    const before = await rowCounts(db);

    const stale = await rejection(
      finish(db, { sessionId: session.id, epoch: 1, status: 'succeeded', exitCode: 0, now: now() }),
    );
    expect(stale).toBeInstanceOf(StaleStatusError);
    expect(stale).toMatchObject({
      code: 'DB_STALE_STATUS',
      expected: { status: 'running', epoch: 1 },
      actual: { status: 'running', epoch: 2 },
    });
    const handle = await rejection(
      recordHandle(db, {
        sessionId: session.id,
        epoch: 1,
        backend: 'docker',
        handle: 'h',
        now: now(),
      }),
    );
    expect(handle).toBeInstanceOf(StaleStatusError);
    const reclaim = await rejection(
      claim(db, { sessionId: session.id, epoch: 0, owner: 'node-c', now: now() }),
    );
    expect(reclaim).toMatchObject({ code: 'DB_STALE_STATUS' });
    expect(await rowCounts(db)).toEqual(before);
    expect((await getSession(db, session.id)).owner).toBe('node-b');
  });

  it('reports an unknown session as NotFoundError, not as stale', async () => {
    const { db } = getDb();
    const err = await rejection(
      claim(db, { sessionId: newId('session'), epoch: 0, owner: 'n', now: new Date() }),
    );
    expect(err).toBeInstanceOf(NotFoundError);
  });

  it('cancels a queued or running session, and only from the expected state', async () => {
    const { db } = getDb();
    const now = steppingClock();
    const a = (await enqueue(db, 'alice', now())).session;
    const cancelled = await cancel(db, {
      sessionId: a.id,
      expected: { status: 'queued', epoch: 0 },
      reason: 'user cancelled',
      node: 'ui-1',
      now: now(),
    });
    expect(cancelled.status).toBe('cancelled');
    const b = (await enqueue(db, 'alice', now())).session;
    await claim(db, { sessionId: b.id, epoch: 0, owner: 'node-a', now: now() });
    const wrong = await rejection(
      cancel(db, {
        sessionId: b.id,
        expected: { status: 'queued', epoch: 0 },
        reason: 'x',
        now: now(),
      }),
    );
    expect(wrong).toBeInstanceOf(StaleStatusError);
    await cancel(db, {
      sessionId: b.id,
      expected: { status: 'running', epoch: 1 },
      reason: 'x',
      now: now(),
    });
    const events = await listSessionEvents(db, b.id);
    expect(events.at(-1)).toMatchObject({
      from: 'running',
      to: 'cancelled',
      reason: 'x',
      node: null,
    });
  });

  it('requeues a recoverable failure once, as attempt 2 of the same task', async () => {
    const { db } = getDb();
    const now = steppingClock();
    const { task, session } = await enqueue(db, 'alice', now());
    await claim(db, { sessionId: session.id, epoch: 0, owner: 'node-a', now: now() });
    await finish(db, {
      sessionId: session.id,
      epoch: 1,
      status: 'failed',
      exitCode: null,
      reason: 'container_replaced',
      userRecoverable: true,
      now: now(),
    });
    const next = await requeue(db, { sessionId: session.id, epoch: 1, now: now() });
    expect(next).toMatchObject({ taskId: task.id, attempt: 2, status: 'queued', epoch: 0 });
    expect(next.id).not.toBe(session.id);
    const again = await rejection(requeue(db, { sessionId: session.id, epoch: 1, now: now() }));
    expect(again).toBeInstanceOf(StaleStatusError);
    expect((await listSessionsForTask(db, task.id)).map((s) => s.attempt)).toEqual([1, 2]);
    expect((await listSessionEvents(db, next.id)).map((e) => e.to)).toEqual(['queued']);
  });

  it('does not requeue a failure the user cannot recover from', async () => {
    const { db } = getDb();
    const now = steppingClock();
    const { session } = await enqueue(db, 'alice', now());
    await claim(db, { sessionId: session.id, epoch: 0, owner: 'node-a', now: now() });
    await finish(db, {
      sessionId: session.id,
      epoch: 1,
      status: 'failed',
      exitCode: 2,
      reason: 'exit 2',
      userRecoverable: false,
      now: now(),
    });
    const before = await rowCounts(db);
    const err = await rejection(requeue(db, { sessionId: session.id, epoch: 1, now: now() }));
    expect(err).toMatchObject({ code: 'DB_VALIDATION', field: 'sessionId' });
    expect(await rowCounts(db)).toEqual(before);
  });

  it('validates every transition input before writing, naming the field', async () => {
    const { db } = getDb();
    const now = steppingClock();
    const { session } = await enqueue(db, 'alice', now());
    const id = session.id;
    const cases: [Promise<unknown>, string][] = [
      [claim(db, { sessionId: 'ses_nope', epoch: 0, owner: 'n', now: now() }), 'sessionId'],
      [claim(db, { sessionId: id, epoch: -1, owner: 'n', now: now() }), 'epoch'],
      [claim(db, { sessionId: id, epoch: 0, owner: 'bad owner', now: now() }), 'owner'],
      [claim(db, { sessionId: id, epoch: 0, owner: 'n', now: new Date(Number.NaN) }), 'now'],
      [
        recordHandle(db, {
          sessionId: id,
          epoch: 1,
          backend: 'k8s' as 'docker',
          handle: 'h',
          now: now(),
        }),
        'backend',
      ],
      [
        recordHandle(db, { sessionId: id, epoch: 1, backend: 'docker', handle: 'a b', now: now() }),
        'handle',
      ],
      [
        finish(db, { sessionId: id, epoch: 1, status: 'succeeded', exitCode: 1.5, now: now() }),
        'exitCode',
      ],
      [
        finish(db, {
          sessionId: id,
          epoch: 1,
          status: 'failed',
          exitCode: 1,
          reason: '',
          userRecoverable: true,
          now: now(),
        }),
        'reason',
      ],
      [
        cancel(db, {
          sessionId: id,
          expected: { status: 'failed' as 'queued', epoch: 0 },
          reason: 'x',
          now: now(),
        }),
        'expected.status',
      ],
    ];
    for (const [promise, field] of cases) {
      const err = await rejection(promise);
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).field).toBe(field);
    }
    expect(await getSession(db, id)).toMatchObject({ status: 'queued', epoch: 0 });
    expect((await listSessionEvents(db, id)).length).toBe(1);
  });

  raceTest(engine)(
    'lets exactly one of two connections claim, then finish, each session',
    async () => {
      const { db, connectAnother } = getDb();
      const other = (await connectAnother()).db;
      const rounds = 300;
      const now = steppingClock();
      for (let n = 0; n < rounds; n++) {
        const { session } = await enqueue(db, `user-${n % 7}`, now());
        const t = now();
        const claims = await Promise.allSettled([
          claim(db, { sessionId: session.id, epoch: 0, owner: 'node-a', now: t }),
          claim(other, { sessionId: session.id, epoch: 0, owner: 'node-b', now: t }),
        ]);
        expect(claims.filter((c) => c.status === 'fulfilled')).toHaveLength(1);
        const lost = claims.find((c) => c.status === 'rejected');
        expect(lost?.status === 'rejected' && lost.reason).toBeInstanceOf(StaleStatusError);

        const f = now();
        const finishes = await Promise.allSettled([
          finish(db, { sessionId: session.id, epoch: 1, status: 'succeeded', exitCode: 0, now: f }),
          finish(other, {
            sessionId: session.id,
            epoch: 1,
            status: 'failed',
            exitCode: 1,
            reason: 'lost',
            userRecoverable: true,
            now: f,
          }),
        ]);
        expect(finishes.filter((c) => c.status === 'fulfilled')).toHaveLength(1);
        const lostFinish = finishes.find((c) => c.status === 'rejected');
        expect(lostFinish?.status === 'rejected' && lostFinish.reason).toBeInstanceOf(
          StaleStatusError,
        );

        const history = (await listSessionEvents(db, session.id)).map((e) => `${e.from}>${e.to}`);
        expect(history.slice(0, 2)).toEqual(['null>queued', 'queued>running']);
        expect(history).toHaveLength(3);
        expect(new Set(history).size).toBe(3);
      }
    },
  );

  it('agrees with a two-field model (status, epoch) on every sequence of attempts', async () => {
    const { db } = getDb();
    type Op =
      | { op: 'claim' | 'adopt' | 'recordHandle'; epoch: number }
      | { op: 'finish'; epoch: number; ok: boolean }
      | { op: 'cancel'; epoch: number; from: 'queued' | 'running' };
    const epoch = fc.integer({ min: 0, max: 3 });
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({
        op: fc.constantFrom('claim' as const, 'adopt' as const, 'recordHandle' as const),
        epoch,
      }),
      fc.record({ op: fc.constant('finish' as const), epoch, ok: fc.boolean() }),
      fc.record({
        op: fc.constant('cancel' as const),
        epoch,
        from: fc.constantFrom('queued' as const, 'running' as const),
      }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 12 }), async (ops) => {
        const now = steppingClock();
        const { session } = await enqueue(db, 'alice', now());
        const model = { status: 'queued' as string, epoch: 0, events: 1 };
        for (const o of ops) {
          const base = { sessionId: session.id, epoch: o.epoch, now: now() };
          let expectOk = false;
          let attempt: Promise<unknown>;
          let next = { ...model };
          if (o.op === 'claim' || o.op === 'adopt') {
            const from = o.op === 'claim' ? 'queued' : 'running';
            expectOk = model.status === from && model.epoch === o.epoch;
            next = { status: 'running', epoch: o.epoch + 1, events: model.events + 1 };
            attempt = (o.op === 'claim' ? claim : adopt)(db, { ...base, owner: 'n' });
          } else if (o.op === 'recordHandle') {
            expectOk = model.status === 'running' && model.epoch === o.epoch;
            next = model;
            attempt = recordHandle(db, { ...base, backend: 'docker', handle: 'h' });
          } else if (o.op === 'finish') {
            expectOk = model.status === 'running' && model.epoch === o.epoch;
            next = {
              status: o.ok ? 'succeeded' : 'failed',
              epoch: o.epoch,
              events: model.events + 1,
            };
            attempt = o.ok
              ? finish(db, { ...base, status: 'succeeded', exitCode: 0 })
              : finish(db, {
                  ...base,
                  status: 'failed',
                  exitCode: 1,
                  reason: 'r',
                  userRecoverable: false,
                });
          } else {
            const c = o as Extract<Op, { op: 'cancel' }>;
            expectOk = model.status === c.from && model.epoch === o.epoch;
            next = { status: 'cancelled', epoch: o.epoch, events: model.events + 1 };
            attempt = cancel(db, {
              sessionId: session.id,
              expected: { status: c.from, epoch: o.epoch },
              reason: 'r',
              now: base.now,
            });
          }
          const outcome = await attempt.then(
            () => 'ok',
            (e: unknown) => (e instanceof StaleStatusError ? 'stale' : e),
          );
          expect(outcome).toBe(expectOk ? 'ok' : 'stale');
          if (expectOk) Object.assign(model, next);
        }
        const row = await getSession(db, session.id);
        expect({ status: row.status, epoch: row.epoch }).toEqual({
          status: model.status,
          epoch: model.epoch,
        });
        expect(await listSessionEvents(db, session.id)).toHaveLength(model.events);
      }),
      { numRuns: 40 },
    );
  });
});
