/**
 * Positions a window shows are the database's: after any sequence of
 * enqueues (three users, a cap of one each and two in all, so the line
 * interleaves users by turns), grants (runs finishing, running cards
 * cancelled) and cancels of waiting cards, every queued card in every
 * window, held by a client from the snapshot and the updates it was sent
 * (whole cards and the compact `positions` and `atCap`), has the position
 * `positionsOf` reads from the rows, and says its user is at their cap
 * exactly while the rows say a run of theirs holds a runner. The server derives those positions from the runtime's
 * line at window time (src/ui-server/linePlaces.ts); nothing renumbers cards.
 * A failure prints fast-check's seed and path; `FC_SEED=<seed> FC_PATH=<path>`
 * replays it (seed 941917237, path 1: a queued cancel closed its user's line
 * up, the closed-up cards' JSON did not change, so the hub never re-placed
 * them by their new keys and a window held the wrong card). Two seeds found
 * the check itself wrong, not the board: 780578997 path 11 (a line of
 * one-second runs keeps a timer due every 100 ms for longer than the 4 s
 * `quiet` allowed) and 276587281 path 4 (under load: `caughtUp` read the
 * runtime's cards, which change before a card that left the line is
 * published, since publishing waits for its stored output; it now waits
 * for what the source published, which is what the hub was told).
 */
import { fc } from '@fast-check/vitest';
import { afterEach, expect, it } from 'vitest';
import type { BoardWindow } from '../../src/board/boardWindow.js';
import { positionsOf } from '../../src/db/dispatchReads.js';
import { userAtCap } from '../../src/machines/userAtCap.js';
import { createTestRuntime, type TestRuntime } from '../../src/testing/index.js';
import type { UiServer } from '../../src/ui-server/createUiServer.js';
import { describeEachEngine } from '../support/databases.js';
import {
  ADMIN,
  ALICE,
  BOB,
  openWindows,
  type RawClient,
  serveSource,
  syncWindow,
} from './wsHarness.js';

let h: TestRuntime | undefined;
let server: UiServer | undefined;
const clients: RawClient[] = [];
const stop = async () => {
  for (const c of clients.splice(0)) c.ws.terminate();
  await server?.close();
  await h?.close();
  server = undefined;
  h = undefined;
};
afterEach(stop);

const none = { offset: 0, limit: 0 };
const create = fc.record({
  kind: fc.constant('create' as const),
  user: fc.constantFrom('alice', 'bob', 'carol'),
  seconds: fc.constantFrom(1, 2, 3600),
});
const op = fc.oneof(
  create,
  fc.record({ kind: fc.constant('advance' as const), ms: fc.constantFrom(500, 1_000, 2_500) }),
  fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat(), running: fc.boolean() }),
);

describeEachEngine('window positions against the rows', (getDb) => {
  it('every queued card in every window has the position positionsOf reads, and the rows’ at-cap state', async () => {
    await fc.assert(
      fc.asyncProperty(
        // A line first (so the head leaving moves cards a window holds), then anything.
        fc.array(create, { minLength: 6, maxLength: 10 }),
        fc.array(op, { minLength: 4, maxLength: 12 }),
        fc.nat({ max: 2 }),
        async (line, rest, offset) => {
          const ops = [...line, ...rest];
          await stop();
          h = await createTestRuntime({
            db: getDb().db,
            caps: { maxRunning: 2, defaultUserCap: 1 },
          });
          const runtime = h.runtime;
          // What the source told its listeners last, per task: the hub's view of the board.
          const told = new Map<string, boolean>();
          runtime.subscribe((card) => told.set(card.taskId, card.queued !== null));
          server = await serveSource(runtime, { subscribeBurst: 100 });
          const page = (o: number, limit: number): BoardWindow => ({
            columns: { queued: { offset: o, limit }, running: none, done: none, failed: none },
          });
          const live = await openWindows(
            server.wsUrl,
            [
              { token: ALICE, userId: 'alice', window: page(offset, 3) },
              { token: BOB, userId: 'bob', window: {} },
              { token: ADMIN, userId: null, window: page(offset, 4) },
              { token: ADMIN, userId: null, window: { filter: { user: 'carol' } } },
            ],
            clients,
          );
          const harness = h;
          const quiet = async () => {
            // Moved positions are pushed at most every positionPushMs (100 ms of
            // the clock): step until nothing is due within that (no push, no run
            // ending). A running one-second run prints every 100 ms, so a line of
            // them (22 at most, two at a time) is quiet only once it has drained.
            for (let i = 0; i < 300; i++) {
              await harness.settle();
              if (harness.clock.nextDue(harness.clock.now() + 100) === null) return caughtUp();
              await harness.advance(100);
            }
            throw new Error('the clock never went quiet');
          };
          // A card that left the line reads its stored output before it is
          // published (a read settle() does not wait for over a server's socket):
          // wait, in real time, until the line the source last told of is the
          // rows' line. Not `cards()`: it changes before that read ends.
          const caughtUp = async () => {
            for (let i = 0; i < 100; i++) {
              const rows = (await harness.sessions()).filter((s) => s.status === 'queued');
              const shown = [...told].filter(([, queued]) => queued).map(([taskId]) => taskId);
              const ids = (xs: string[]) => JSON.stringify(xs.sort());
              if (ids(rows.map((s) => s.taskId)) === ids(shown)) return;
              await new Promise((resolve) => setTimeout(resolve, 20));
            }
            throw new Error('the board never caught up with the rows');
          };
          const check = async () => {
            await quiet();
            for (const v of live) {
              const { held, counts, want } = await syncWindow(v, runtime.cards(v.userId));
              const shown = held.filter((c) => c.queued !== null);
              const truth = await positionsOf(
                getDb().db,
                shown.map((c) => c.sessionId),
              );
              const rows = await harness.sessions();
              const runningOf = (userId: string) =>
                rows.filter((s) => s.userId === userId && s.status === 'running').length;
              for (const card of shown) {
                const at = `${card.title} in ${JSON.stringify(v.window)}`;
                expect(card.queued?.position, at).toBe(truth.get(card.sessionId));
                // Everyone's cap is the default 1: at cap exactly while a run of theirs holds a runner.
                expect(card.queued?.atCap, at).toEqual(
                  userAtCap({ running: runningOf(card.userId), maxRunning: 1 }),
                );
              }
              expect(held).toEqual(want.cards);
              expect(counts).toEqual(want.counts);
            }
          };
          let n = 0;
          for (const o of ops) {
            if (o.kind === 'create')
              await runtime.createTask(o.user, {
                title: `${o.user} ${n++}`,
                image: 'runner:v1',
                command: ['agent', String(o.seconds)],
              });
            else if (o.kind === 'advance') await harness.advance(o.ms);
            else {
              const column = o.running ? 'running' : 'queued';
              const open = runtime.cards(null).filter((c) => c.column === column);
              if (open.length > 0) await runtime.cancel(null, open[o.pick % open.length]!.taskId);
            }
            await check();
          }
          expect(harness.errors).toEqual([]);
        },
      ),
      {
        numRuns: Number(process.env.FC_RUNS ?? 5),
        endOnFailure: true,
        ...(process.env.FC_SEED
          ? { seed: Number(process.env.FC_SEED), path: process.env.FC_PATH }
          : {}),
      },
    );
  }, 240_000);
});
