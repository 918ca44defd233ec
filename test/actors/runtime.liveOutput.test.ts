/**
 * A running card's output on the board of a node that does not run it:
 * two nodes on one database and one virtual clock, a run on node A, node
 * B's board watched. B shows A's output within two periods of its being
 * printed (A writes at most once a period, B reads once a period), reads
 * nothing while nobody watches it, and the shared row is gone once the run
 * ended. With sharing off, B shows nothing until the run ends (as before).
 */
import { sql } from 'kysely';
import { expect, test } from 'vitest';
import type { Runtime, RuntimeCard } from '../../src/actors/runtimeTypes.js';
import { createTestRuntime } from '../../src/testing/index.js';
import { advanceAll, bootBeside, nodesOfEachTest } from '../support/multiNode.js';
import { pgliteStore } from '../support/pgliteRuntimes.js';

const store = pgliteStore();
const nodes = nodesOfEachTest();

/** The harness as node A and node B beside it, with `liveOutputMs` on B. */
async function twoNodes(liveOutputMs: number | null) {
  const h = await createTestRuntime({ db: store.db, nodeId: 'node-a', dispatchPollMs: 500 });
  nodes.h = h;
  const { runtime: b, errors } = await bootBeside(nodes, h, {
    db: store.db,
    caps: { maxRunning: 4, defaultUserCap: 2 },
    nodeId: 'node-b',
    bootId: 'b',
    dispatchPollMs: 500,
    liveOutputMs,
  });
  return { h, b, errors, nodes: [h.runtime, b] };
}

const cardOf = (node: Runtime, taskId: string): RuntimeCard | undefined =>
  node.cards(null).find((c) => c.taskId === taskId);

test("B's board shows the output of A's run within two periods, only while watched", async () => {
  const { h, b, errors, nodes } = await twoNodes(1_000);
  // 20 s: a step printed every 2 s.
  const { task } = await h.runtime.submit('alice', {
    title: 't',
    image: 'runner:v1',
    command: ['agent', '20'],
  });
  await advanceAll(h, nodes, 500);
  expect((await h.sessions()).find((s) => s.taskId === task.id)?.owner).toMatch(/^node-a@/);
  expect(cardOf(h.runtime, task.id)?.lastOutput).toEqual([
    '[agent] reading the task description...',
  ]);

  // Nobody watches B: it reads no tail, and once its row says so (a boot's
  // row says watched until a linger after its start) A writes none either.
  await advanceAll(h, nodes, 3_000);
  expect(cardOf(b, task.id)?.column).toBe('running');
  expect(cardOf(b, task.id)?.lastOutput).toEqual([]);
  const written = async () =>
    (
      await sql<{ seq: string | null }>`SELECT max(seq)::text AS seq FROM live_tails`.execute(
        store.db,
      )
    ).rows[0]?.seq ?? null;
  const before = await written();
  await advanceAll(h, nodes, 4_000); // two more lines printed on A
  expect(await written()).toBe(before);

  const unwatch = b.watch();
  const told: string[][] = [];
  const unsubscribe = b.subscribe((card) => {
    if (card.taskId === task.id) told.push(card.lastOutput);
  });
  await advanceAll(h, nodes, 2_000);
  const shown = cardOf(b, task.id)?.lastOutput ?? [];
  expect(shown.slice(0, 2)).toEqual([
    '[agent] reading the task description...',
    '[agent] cloning the repository...',
  ]);
  expect(told.at(-1)).toEqual(shown);
  // A's card and B's agree within two periods of every step.
  for (let i = 0; i < 4; i++) {
    await advanceAll(h, nodes, 2_000);
    expect(cardOf(b, task.id)?.lastOutput).toEqual(cardOf(h.runtime, task.id)?.lastOutput);
  }
  unsubscribe();
  unwatch();

  await advanceAll(h, nodes, 15_000);
  expect(cardOf(b, task.id)?.column).toBe('done');
  expect(cardOf(b, task.id)?.lastOutput.at(-1)).toBe('[agent] done');
  // A deleted its row when the run left it.
  const left = await sql<{ n: number }>`SELECT count(*)::int AS n FROM live_tails`.execute(
    store.db,
  );
  expect(left.rows[0]?.n).toBe(0);
  expect(errors).toEqual([]);
  expect(h.errors).toEqual([]);
});

test('with sharing off, B shows no output of a run it does not hold until the run ends', async () => {
  const { h, b, nodes } = await twoNodes(null);
  const { task } = await h.runtime.submit('alice', {
    title: 't',
    image: 'runner:v1',
    command: ['agent', '20'],
  });
  const unwatch = b.watch();
  await advanceAll(h, nodes, 6_000);
  expect(cardOf(b, task.id)?.column).toBe('running');
  expect(cardOf(b, task.id)?.lastOutput).toEqual([]);
  await advanceAll(h, nodes, 20_000);
  expect(cardOf(b, task.id)?.lastOutput.at(-1)).toBe('[agent] done');
  unwatch();
});
