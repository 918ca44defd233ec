/**
 * A queued card says when its user holds their whole cap, on both engines,
 * as the runtime's cards and as a watching client holds them from the
 * frames: with a cap of one, alice's second job waits "at cap" while her
 * first runs; her first ends and the card says she is not at cap (the
 * global cap is full, so it waits for a free runner), then it is granted.
 * On two nodes the run ends on the node that does not serve the board, and
 * the served board's card flips within the feed. A flip alone rides the
 * update's compact `atCap` map, not the whole card.
 */
import { expect, test } from 'vitest';
import type { BoardCard, BoardSource } from '../../src/board/boardPort.js';
import type { ServerFrame } from '../../src/board/boardProtocol.js';
import { createTestRuntime } from '../../src/testing/index.js';
import { describeEachEngine } from '../support/databases.js';
import { agent, servedEachTest } from './runtimeServed.js';
import { ALICE, applyFrames, openWindows, serveSource, type WindowViewer } from './wsHarness.js';

const served = servedEachTest();
const CAPS = { maxRunning: 2, defaultUserCap: 1 };
const AT_CAP = { running: 1, max: 1 };

const cardOf = (source: BoardSource, taskId: string): BoardCard | undefined =>
  source.cards(null).find((c) => c.taskId === taskId);

/** Serves `source` (the test's server) with a socket of alice's on the default window. */
async function watchAlice(source: Parameters<typeof serveSource>[0]): Promise<WindowViewer> {
  served.server = await serveSource(source);
  const [alice] = await openWindows(
    served.server.wsUrl,
    [{ token: ALICE, userId: 'alice', window: {} }],
    served.clients,
  );
  if (alice === undefined) throw new Error('no window');
  return alice;
}

/** Applies what the viewer was sent since; returns the frames and the card it holds. */
async function held(v: WindowViewer, taskId: string) {
  const frames: ServerFrame[] = await v.c.sync();
  applyFrames(v.state, frames);
  return { frames, card: v.state.cards.get(taskId) };
}

/** The updates among `frames` that told `taskId`'s at-cap state apart from a whole card. */
const compactFlips = (frames: ServerFrame[], taskId: string) =>
  frames.filter(
    (f) =>
      f.type === 'update' &&
      f.atCap !== undefined &&
      taskId in f.atCap &&
      !f.cards.some((c) => c.taskId === taskId),
  );

describeEachEngine('a queued card at its user’s cap', (getDb) => {
  test('says so while the user holds their cap, and not once a run of theirs ends, then is granted', async () => {
    // One node, nobody beside it: no poll of other nodes' ticks needed.
    const h = await createTestRuntime({ db: getDb().db, caps: CAPS, dispatchPollMs: 3_600_000 });
    served.h = h;
    const runtime = h.runtime;
    await runtime.createTask('alice', agent('alice first', 100));
    await runtime.createTask('bob', agent('bob', 150));
    // carol's comes before alice's second: the slot alice's first frees goes to it.
    const carol = await runtime.createTask('carol', agent('carol', 1_000));
    const second = await runtime.createTask('alice', agent('alice second', 10));
    await h.settle();
    const alice = await watchAlice(runtime);

    // alice runs 1 of her 1: her second waits on her cap, whatever its position.
    expect(cardOf(runtime, second.taskId)?.queued).toMatchObject({ position: 2, atCap: AT_CAP });
    expect(cardOf(runtime, carol.taskId)?.queued).toMatchObject({ position: 1, atCap: null });
    expect((await held(alice, second.taskId)).card).toEqual(cardOf(runtime, second.taskId));

    // alice's first ends; carol takes the runner it frees. alice is under her
    // cap now, but every runner is taken: waiting for a free runner.
    await h.advance(101_000);
    await h.advance(200);
    const freed = cardOf(runtime, second.taskId);
    expect(freed?.queued).toMatchObject({ position: 1, atCap: null });
    expect(cardOf(runtime, carol.taskId)?.column).toBe('running');
    const after = await held(alice, second.taskId);
    expect(after.card).toEqual(freed);

    // bob's run ends: alice's second gets the runner.
    await h.advance(50_000);
    await h.advance(200);
    expect(cardOf(runtime, second.taskId)?.column).not.toBe('queued');
    expect((await held(alice, second.taskId)).card).toEqual(cardOf(runtime, second.taskId));
    expect(h.errors).toEqual([]);
  });

  test('a cap raised while every runner is taken: not at cap, and back at it when lowered', async () => {
    const h = await createTestRuntime({ db: getDb().db, caps: CAPS, dispatchPollMs: 3_600_000 });
    served.h = h;
    const runtime = h.runtime;
    await runtime.createTask('alice', agent('alice first', 1_000));
    await runtime.createTask('bob', agent('bob', 1_000));
    const second = await runtime.createTask('alice', agent('alice second', 10));
    await h.settle();
    const alice = await watchAlice(runtime);
    expect(alice.state.cards.get(second.taskId)?.queued?.atCap).toEqual(AT_CAP);

    await runtime.setUserCap('alice', 2);
    await h.advance(200);
    // Room under her own cap; the global cap (2, both taken) is what she waits for.
    expect(cardOf(runtime, second.taskId)?.queued?.atCap).toBeNull();
    const raised = await held(alice, second.taskId);
    expect(raised.card).toEqual(cardOf(runtime, second.taskId));
    expect(compactFlips(raised.frames, second.taskId)).toHaveLength(1);

    await runtime.setUserCap('alice', null);
    await h.advance(200);
    expect(cardOf(runtime, second.taskId)?.queued?.atCap).toEqual(AT_CAP);
    const lowered = await held(alice, second.taskId);
    expect(lowered.card).toEqual(cardOf(runtime, second.taskId));
    expect(compactFlips(lowered.frames, second.taskId)).toHaveLength(1);
    expect(h.errors).toEqual([]);
  });

  test('two nodes: the run ends on the node that does not serve the board, and the served card flips', async () => {
    // The harness's node runs nothing (localMax 0): every run is node B's.
    const h = await createTestRuntime({
      db: getDb().db,
      caps: CAPS,
      nodeId: 'node-a',
      localMax: 0,
    });
    served.h = h;
    const b = await h.addNode({ nodeId: 'node-b', localMax: 2 });
    const first = await b.createTask('alice', agent('alice first', 100));
    await b.createTask('bob', agent('bob long', 1_000));
    const carol = await b.createTask('carol', agent('carol', 1_000));
    const second = await b.createTask('alice', agent('alice second', 10));
    await h.advance(1_000);
    const owners = (await h.sessions())
      .filter((s) => s.status === 'running')
      .map((s) => s.owner?.split('@')[0]);
    expect(owners).toEqual(['node-b', 'node-b']);
    const alice = await watchAlice(h.runtime);
    expect(alice.state.cards.get(second.taskId)?.queued?.atCap).toEqual(AT_CAP);
    expect(cardOf(h.runtime, second.taskId)).toEqual(alice.state.cards.get(second.taskId));

    // alice's first ends on node B; carol's is granted there. Node A learns
    // of both from the feed (one poll), and its client within one push.
    await h.advance(100_000);
    await h.advance(1_200);
    expect(cardOf(b, first.taskId)?.column).toBe('done');
    expect(cardOf(b, carol.taskId)?.column).toBe('running');
    expect(cardOf(h.runtime, second.taskId)?.queued).toMatchObject({ position: 1, atCap: null });
    const flipped = await held(alice, second.taskId);
    expect(flipped.card?.queued?.atCap).toBeNull();
    expect(flipped.card).toEqual(cardOf(h.runtime, second.taskId));
    expect(cardOf(b, second.taskId)).toEqual(cardOf(h.runtime, second.taskId));
    expect(h.errors).toEqual([]);
  });
});
