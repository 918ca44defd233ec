/**
 * Migration 7: a tick writes no history rows, and `session_history` derives
 * the same history the tick's event rows used to hold (every transition's
 * from, to, reason, node and epoch), per session in (epoch, step) order
 * and across the store in the order the ticks decided (tick, phase).
 */
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { newId } from '../../../src/db/ids.js';
import { listSessionEvents } from '../../../src/db/sessionQueries.js';
import type { TickCancel, TickRetry } from '../../../src/db/tickTypes.js';
import { describeEachEngine } from '../../support/databases.js';
import { readDispatchHistory } from '../../support/dispatchReplay.js';
import {
  appliedOf,
  enqueueOp,
  expectConsistent,
  finishOp,
  ref,
  requeueOp,
  ticker,
} from '../tickFixtures.js';

describeEachEngine('derived history', (getDb) => {
  it('every ticked transition is in the history, with its reason, node and epoch', async () => {
    const { db } = getDb();
    const t = ticker(db, { defaultUserCap: 2 });
    const [a, b, c] = [enqueueOp('ann'), enqueueOp('ann'), enqueueOp('bob')];
    const t1 = await t([a, b, c], { want: 2, owner: 'n1@boot' });
    const [ga, gc] = t1.granted.map((g) => g.session);
    expect([ga?.id, gc?.id]).toEqual([a.sessionId, c.sessionId]);
    // a is interrupted by the infrastructure (next attempt at the head), b is
    // cancelled while queued, c while running, by a tick of another node.
    const q = requeueOp(a.sessionId, 1);
    const cancel = (id: string, status: 'queued' | 'running', epoch: number): TickCancel => ({
      op: 'cancel',
      ref: ref('c'),
      sessionId: id,
      expected: { status, epoch },
      reason: 'cancelled by user',
      column: 'failed',
    });
    const t2 = await t([q, cancel(b.sessionId, 'queued', 0), cancel(c.sessionId, 'running', 1)], {
      want: 1,
      owner: 'n2@boot',
    });
    const next = appliedOf(t2, q.ref).next?.session;
    expect(t2.granted.map((g) => g.session.id)).toEqual([next?.id]);
    await t([finishOp(next?.id ?? '', 1)], { owner: 'n2@boot' });
    const retry: TickRetry = {
      op: 'retry',
      ref: ref('r'),
      taskId: c.taskId,
      actor: 'bob',
      sessionId: newId('session'),
      expected: { sessionId: c.sessionId, status: 'cancelled', epoch: 1 },
    };
    appliedOf(await t([retry], { owner: 'n3@boot' }), retry.ref);

    const history = async (id: string) =>
      (await listSessionEvents(db, id)).map((e) => [e.from, e.to, e.reason, e.node, e.epoch]);
    expect(await history(a.sessionId)).toEqual([
      [null, 'queued', 'created', null, 0],
      ['queued', 'running', 'claimed', 'n1@boot', 1],
      ['running', 'failed', 'container_replaced', 'n1@boot', 1],
    ]);
    expect(await history(next?.id ?? '')).toEqual([
      [null, 'queued', `requeued after ${a.sessionId}`, null, 0],
      ['queued', 'running', 'claimed', 'n2@boot', 1],
      ['running', 'succeeded', null, 'n2@boot', 1],
    ]);
    expect(await history(b.sessionId)).toEqual([
      [null, 'queued', 'created', null, 0],
      ['queued', 'cancelled', 'cancelled by user', 'n2@boot', 0],
    ]);
    expect(await history(c.sessionId)).toEqual([
      [null, 'queued', 'created', null, 0],
      ['queued', 'running', 'claimed', 'n1@boot', 1],
      ['running', 'cancelled', 'cancelled by user', 'n2@boot', 1],
    ]);
    expect(await history(retry.sessionId)).toEqual([
      [null, 'queued', `retry of ${c.sessionId}`, null, 0],
    ]);

    // No tick wrote an event row; one log row per tick.
    const { rows } = await sql<{ events: number; ticks: number }>`
      SELECT (SELECT count(*)::int FROM session_events) AS events,
        (SELECT count(*)::int FROM dispatch_ticks) AS ticks`.execute(db);
    expect(rows[0]).toEqual({ events: 0, ticks: 4 });

    // Across the store: the order the ticks decided, finishes before the grants they made room for.
    const order = (await readDispatchHistory(db)).map(
      (e) => `${e.tick} ${e.sessionId.slice(-4)} ${e.from ?? '-'}>${e.to}`,
    );
    const id = (s: string | undefined) => (s ?? '').slice(-4);
    const tick2 = order.slice(5, 10);
    expect(tick2.slice(0, 2)).toEqual([
      `2 ${id(a.sessionId)} running>failed`,
      `2 ${id(next?.id)} ->queued`,
    ]);
    // One phase: the two cancels in no particular order.
    expect(tick2.slice(2, 4).sort()).toEqual(
      [`2 ${id(b.sessionId)} queued>cancelled`, `2 ${id(c.sessionId)} running>cancelled`].sort(),
    );
    expect(tick2[4]).toBe(`2 ${id(next?.id)} queued>running`);
    await expectConsistent(db);
  });
});
