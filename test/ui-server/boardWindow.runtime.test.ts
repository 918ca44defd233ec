/**
 * Windows over the real runtime, on both engines: every window a user asks
 * for (a page of the line, a filter naming another user, a watch on another
 * user's task) holds only their cards, the admin's holds everyone's, and a
 * page of the line keeps the positions the runtime's own cards say as runs
 * finish and the line moves up.
 */
import { pino } from 'pino';
import { expect, test } from 'vitest';
import type { BoardCard } from '../../src/board/boardPort.js';
import type { BoardWindow } from '../../src/board/boardWindow.js';
import { createTestRuntime } from '../../src/testing/index.js';
import { createUiServer } from '../../src/ui-server/createUiServer.js';
import { describeEachEngine } from '../support/databases.js';
import { agent, servedEachTest } from './runtimeServed.js';
import {
  ADMIN,
  ALICE,
  applyFrames,
  BOB,
  byTask,
  expectedWindow,
  RawClient,
  TOKENS,
} from './wsHarness.js';

const served = servedEachTest();
const none = { offset: 0, limit: 0 };

describeEachEngine('board windows over the runtime', (getDb) => {
  test('each window holds only its viewer’s cards, with the runtime’s positions, as the line moves', async () => {
    const { db } = getDb();
    const h = await createTestRuntime({ db, caps: { maxRunning: 2, defaultUserCap: 1 } });
    served.h = h;
    const runtime = h.runtime;
    const bobTask = await runtime.createTask('bob', agent('bob 0', 30));
    for (let i = 0; i < 3; i++) await runtime.createTask('bob', agent(`bob ${i + 1}`, 30));
    for (let i = 0; i < 12; i++) await runtime.createTask('alice', agent(`alice ${i}`, 10 + i));
    await h.settle();
    const server = await createUiServer({
      source: runtime,
      commands: runtime,
      tokens: TOKENS,
      port: 0,
      host: '127.0.0.1',
      logger: pino({ level: 'silent' }),
    });
    served.server = server;
    const page: BoardWindow = {
      columns: { queued: { offset: 3, limit: 4 }, running: none, done: none, failed: none },
    };
    const views: Array<{ token: string; userId: string | null; window: BoardWindow }> = [
      { token: ALICE, userId: 'alice', window: page },
      // Alice names Bob: in her view there is no Bob, whatever she asks.
      { token: ALICE, userId: 'alice', window: { filter: { user: 'bob' } } },
      { token: ALICE, userId: 'alice', window: { columns: page.columns, watch: [bobTask.taskId] } },
      { token: BOB, userId: 'bob', window: {} },
      { token: ADMIN, userId: null, window: page },
      { token: ADMIN, userId: null, window: { filter: { user: 'bob', text: 'bob 2' } } },
    ];
    const live: Array<
      (typeof views)[number] & { c: RawClient; state: Parameters<typeof applyFrames>[0] }
    > = [];
    for (const v of views) {
      const c = await RawClient.open(server.wsUrl, v.token);
      served.clients.push(c);
      c.send({ type: 'subscribe', v: 1, window: v.window });
      const state = { seq: -1, cards: new Map<string, BoardCard>() } as Parameters<
        typeof applyFrames
      >[0];
      applyFrames(state, [await c.next('snapshot')]);
      live.push({ ...v, c, state });
    }
    const check = async () => {
      for (const v of live) {
        applyFrames(v.state, await v.c.sync());
        const want = expectedWindow(runtime.cards(v.userId), v.window);
        expect(byTask([...v.state.cards.values()])).toEqual(want.cards);
        expect(v.state.counts).toEqual(want.counts);
        if (v.userId !== null)
          for (const card of v.state.cards.values()) expect(card.userId).toBe(v.userId);
      }
    };
    await check();
    expect(live[1]!.state.cards.size).toBe(0);
    expect(live[2]!.state.cards.has(bobTask.taskId)).toBe(false);
    expect([...live[5]!.state.cards.values()].map((c) => c.title)).toEqual(['bob 2']);
    // Alice's page of the line: her 4th to 7th waiting cards, numbered in the whole line.
    const positions = [...live[0]!.state.cards.values()].map((c) => c.queued?.position);
    expect(positions.every((p) => typeof p === 'number' && p > 3)).toBe(true);
    for (const step of [11_000, 12_000, 31_000]) {
      await h.advance(step);
      await h.settle();
      // Moved positions reach subscribers at most every positionPushMs (100 ms of the clock).
      await h.advance(200);
      await check();
    }
    expect(h.errors).toEqual([]);
  });
});
