/**
 * The dispatch engine's promises with 1 and with 3 nodes on one database
 * and one virtual clock (in-process runtimes sharing the store and the
 * simulated cluster), under random arrivals: through whichever node a task
 * is submitted,
 *
 * - caps hold at every instant (the ordered history replayed);
 * - a newcomer waits at most one grant per other user (docs/runner-pool.md);
 * - every node's board shows every queued card at its exact place in the
 *   cluster's order (the rows' (turn, join_seq) order) once it has seen the
 *   latest tick: node 0 by the poll alone, the others by NOTIFY too; each
 *   catches up within a few polls of the last change (a change that lands
 *   just after a poll waits for the next one), and says of each whether its
 *   user is at their cap exactly as the rows' running runs say.
 */
import fc from 'fast-check';
import { afterEach, expect, it } from 'vitest';
import { createRuntime } from '../../src/actors/runtime.js';
import type { Runtime } from '../../src/actors/runtimeTypes.js';
import { SimulatedBackend } from '../../src/containers/simulated/SimulatedBackend.js';
import { userAtCap } from '../../src/machines/userAtCap.js';
import { createTestRuntime, type TestRuntime } from '../../src/testing/index.js';
import { describeEachEngine } from '../support/databases.js';
import { readDispatchHistory, replayDispatch } from '../support/dispatchReplay.js';
import { advanceAll, killAll } from '../support/multiNode.js';

const CAPS = { maxRunning: 3, defaultUserCap: 1 };
const POLL_MS = 100;
const USERS = ['ann', 'bob', 'cat', 'dan', 'eve'];

let h: TestRuntime | undefined;
const others: Runtime[] = [];
afterEach(async () => {
  await killAll(others.splice(0));
  await h?.close();
  h = undefined;
});

const arrival = fc.record({
  user: fc.constantFrom(...USERS),
  node: fc.nat({ max: 2 }),
  seconds: fc.integer({ min: 1, max: 4 }),
  afterMs: fc.constantFrom(0, 0, 200, 1_500),
});

describeEachEngine('dispatch: caps, fairness and positions over nodes', (getDb) => {
  for (const nodeCount of [1, 3]) {
    it(`${nodeCount} node(s): caps, the newcomer bound, exact positions and at-cap states on every board`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(arrival, { minLength: 4, maxLength: 14 }), async (script) => {
          await killAll(others.splice(0));
          await h?.close();
          h = await createTestRuntime({
            db: getDb().db,
            caps: CAPS,
            nodeId: 'node0',
            dispatchPollMs: POLL_MS,
          });
          const harness = h;
          const nodes: Runtime[] = [h.runtime];
          for (let i = 1; i < nodeCount; i++) {
            const r = await createRuntime({
              db: getDb().db,
              backend: new SimulatedBackend(harness.cluster),
              clock: harness.clock,
              caps: CAPS,
              nodeId: `node${i}`,
              bootId: 'b',
              dispatchPollMs: POLL_MS,
              notifications: await getDb().connectAnother(),
              onError: (e) => harness.errors.push(e),
            });
            others.push(r);
            nodes.push(r);
          }
          for (const a of script) {
            const via = nodes[a.node % nodes.length] as Runtime;
            await via.submit(a.user, {
              title: `${a.user} ${a.seconds}s`,
              image: 'runner:v1',
              command: ['sleep', String(a.seconds)],
            });
            await advanceAll(harness, nodes, a.afterMs + 150);
            // Every node catches up with the latest tick within a few polls
            // (more only while runs keep finishing meanwhile)...
            for (let polls = 0; ; polls++) {
              const state = await getDb()
                .db.selectFrom('dispatch_state')
                .select('tick')
                .executeTakeFirst();
              const tick = Number(state?.tick ?? 0);
              if (nodes.every((n) => n.health().tick >= tick)) break;
              expect(polls, 'polls for every node to see the latest tick').toBeLessThan(20);
              await advanceAll(harness, nodes, POLL_MS);
            }
            // ...and then every board agrees with the rows' order:
            // Every board agrees with the rows' order, within one poll.
            const queued = (await harness.sessions())
              .filter((s) => s.status === 'queued')
              .sort((x, y) => (x.turn ?? 0) - (y.turn ?? 0) || (x.joinSeq ?? 0) - (y.joinSeq ?? 0));
            const truth = new Map(queued.map((s, i) => [s.id, i + 1]));
            // ...and says who waits on their own cap, as the rows' running runs do.
            const rows = await harness.sessions();
            const capTruth = new Map(
              queued.map((s) => {
                const running = rows.filter(
                  (r) => r.userId === s.userId && r.status === 'running',
                ).length;
                return [s.id, userAtCap({ running, maxRunning: CAPS.defaultUserCap })];
              }),
            );
            for (const n of nodes) {
              const held = n.cards(null).filter((c) => c.queued !== null);
              expect(new Map(held.map((c) => [c.sessionId, c.queued?.position]))).toEqual(truth);
              expect(new Map(held.map((c) => [c.sessionId, c.queued?.atCap]))).toEqual(capTruth);
            }
          }
          await advanceAll(harness, nodes, 30_000);
          const sessions = await harness.sessions();
          expect(sessions.every((s) => s.status === 'succeeded')).toBe(true);
          const events = await readDispatchHistory(getDb().db);
          const replay = replayDispatch(events, {
            globalCap: CAPS.maxRunning,
            userCap: () => CAPS.defaultUserCap,
          });
          expect(replay.violations).toEqual([]);
          expect(replay.grants).toBe(script.length);
          expect(harness.errors).toEqual([]);
        }),
        { numRuns: 6, endOnFailure: true },
      );
    }, 240_000);
  }
});
