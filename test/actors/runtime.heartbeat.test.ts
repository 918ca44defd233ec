/**
 * Multi-node liveness from `node_heartbeats`: two runtimes on one database
 * and one simulated cluster, on one virtual clock. Node B never adopts node
 * A's runs while A beats; once A dies (no more beats) B adopts them after
 * the staleness window. A deploy of one node adopts its previous boot's
 * runs at once, however fresh that boot's last beat.
 */
import { expect, test } from 'vitest';
import { createRuntime } from '../../src/actors/runtime.js';
import * as heartbeat from '../../src/actors/runtimeHeartbeat.js';
import { SimulatedBackend } from '../../src/containers/simulated/SimulatedBackend.js';
import { ownerBeat } from '../../src/db/index.js';
import { createTestRuntime, type TestRuntime } from '../../src/testing/index.js';
import { describeEachEngine } from '../support/databases.js';
import { advanceAll, nodesOfEachTest, settleAll } from '../support/multiNode.js';

const nodes = nodesOfEachTest();

const RECONCILE = 60_000; // heartbeat every 20 s, stale after 3 missed beats (60 s)
const agent = (seconds: number) => ({
  title: 'work',
  image: 'runner:v1',
  command: ['agent', String(seconds)],
});

describeEachEngine('runtime: liveness from heartbeats', (getDb) => {
  /** Node A, the harness's, stopped after the test. */
  const bootA = async () => {
    nodes.h = await createTestRuntime({ db: getDb().db, nodeId: 'nodeA', reconcileMs: RECONCILE });
    return nodes.h;
  };
  const bootB = async (harness: TestRuntime, errors: unknown[]) => {
    const b = await createRuntime({
      db: getDb().db,
      backend: new SimulatedBackend(harness.cluster),
      clock: harness.clock,
      caps: { maxRunning: 4, defaultUserCap: 2 },
      pollMs: 5_000,
      reconcileMs: RECONCILE,
      nodeId: 'nodeB',
      bootId: 'b1',
      onError: (e) => errors.push(e),
    });
    nodes.others.push(b);
    return b;
  };

  test('node B leaves node A alone while A beats, and adopts its runs once A has missed its beats', async () => {
    const h = await bootA();
    const a = h.runtime;
    const ids = [
      (await a.createTask('ann', agent(900))).sessionId,
      (await a.createTask('bob', agent(900))).sessionId,
    ];
    await h.advance(10_000);
    const errorsB: unknown[] = [];
    const b = await bootB(h, errorsB);
    const both = [a, b];
    await settleAll(both);
    // Three of B's periodic passes while A is alive and beating: nothing changes hands.
    await advanceAll(h, both, 3 * RECONCILE);
    let rows = await h.sessions();
    expect(rows.map((s) => [s.status, s.owner])).toEqual([
      ['running', 'nodeA@boot1'],
      ['running', 'nodeA@boot1'],
    ]);
    expect(b.liveRunners()).toEqual([]);

    // A dies: no cleanup, no more beats. Its last beat still vouches for it for a while.
    const lastBeat = (await ownerBeat(getDb().db, { owner: 'nodeA@boot1' })).beatAt?.getTime();
    expect(lastBeat).toBeDefined();
    a.kill();
    await b.reconcile();
    await settleAll([b]);
    rows = await h.sessions();
    expect(rows.every((s) => s.owner === 'nodeA@boot1')).toBe(true);
    // Past the window (3 beats of 20 s after the last one), B's next pass adopts.
    const window = 3 * 20_000;
    await advanceAll(h, [b], (lastBeat ?? 0) + window + 1 - h.clock.now());
    await b.reconcile();
    await settleAll([b]); // the adopting runners' CAS
    rows = await h.sessions();
    expect(rows.map((s) => s.owner)).toEqual(['nodeB@b1', 'nodeB@b1']);
    for (const id of ids) {
      const adoptions = (await h.events(id)).filter((e) => e.reason === 'adopted');
      expect(adoptions).toHaveLength(1);
    }
    await advanceAll(h, [b], 900_000);
    rows = await h.sessions();
    expect(rows.map((s) => s.status)).toEqual(['succeeded', 'succeeded']);
    for (const id of ids) expect(h.execLog(id)).toHaveLength(1);
    expect(errorsB).toEqual([]);
  });

  test('a deploy of one node adopts its previous boot at once, though that boot beat a moment ago', async () => {
    const h = await bootA();
    const { sessionId } = await h.runtime.createTask('ann', agent(120));
    await h.advance(19_000);
    const beat = await ownerBeat(getDb().db, { owner: 'nodeA@boot1' });
    expect(h.clock.now() - (beat.beatAt?.getTime() ?? 0)).toBeLessThan(20_000);
    await h.deploy(); // the boot pass runs now, with no time passing
    const s = (await h.sessions()).find((r) => r.id === sessionId);
    expect(s?.owner).toBe('nodeA@boot2');
    expect((await ownerBeat(getDb().db, { owner: 'nodeA@boot1' })).replaced).toBe(true);
    await h.advance(120_000);
    expect((await h.sessions()).find((r) => r.id === sessionId)?.status).toBe('succeeded');
    expect(h.errors).toEqual([]);
  });

  test('a node that stops on purpose deletes its beat: another node adopts its runs at once', async () => {
    const h = await bootA();
    const { sessionId } = await h.runtime.createTask('ann', agent(120));
    await h.advance(5_000);
    const b = await bootB(h, []);
    await settleAll([h.runtime, b]);
    expect((await h.sessions())[0]?.owner).toBe('nodeA@boot1');
    await h.runtime.stop();
    expect((await ownerBeat(getDb().db, { owner: 'nodeA@boot1' })).beatAt).toBeNull();
    await b.reconcile();
    await settleAll([b]);
    expect((await h.sessions()).find((s) => s.id === sessionId)?.owner).toBe('nodeB@b1');
    await advanceAll(h, [b], 150_000);
    expect((await h.sessions()).find((s) => s.id === sessionId)?.status).toBe('succeeded');
    expect(h.execLog(sessionId)).toHaveLength(1);
  });

  test("another node sees a node's earlier boot as gone as soon as that node has booted again", async () => {
    const h = await bootA();
    await h.runtime.createTask('ann', agent(120));
    await h.advance(5_000);
    const b = await bootB(h, []);
    const liveness = heartbeat.heartbeatLiveness({
      db: getDb().db,
      owner: b.owner,
      nodeId: 'nodeB',
      heartbeatMs: 20_000,
      staleBeats: 3,
      now: () => h?.clock.now() ?? 0,
    });
    expect(await liveness.isAlive('nodeA@boot1')).toBe(true);
    await h.deploy();
    expect(await liveness.isAlive('nodeA@boot1')).toBe(false);
    expect(await liveness.isAlive('nodeA@boot2')).toBe(true);
    expect(await liveness.isAlive('nodeC@never')).toBe(false);
    expect(await liveness.isAlive(b.owner)).toBe(true);
  });
});
