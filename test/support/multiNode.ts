/**
 * Several runtimes on one database, one simulated cluster and one virtual
 * clock (the harness's): settle every node, and move the shared clock,
 * settling every node after each timer.
 */
import { afterEach } from 'vitest';
import { createRuntime } from '../../src/actors/runtime.js';
import type { Runtime, RuntimeOptions } from '../../src/actors/runtimeTypes.js';
import { SimulatedBackend } from '../../src/containers/simulated/SimulatedBackend.js';
import { drained, KILLED_NODE_DRAIN_MS } from '../../src/testing/createTestRuntime.js';
import type { TestRuntime } from '../../src/testing/index.js';

/** Waits until no node has I/O in flight for a few turns of the loop (30 s real-time deadline). */
export async function settleAll(nodes: readonly Runtime[]): Promise<void> {
  let quiet = 0;
  const deadline = Date.now() + 30_000;
  while (quiet < 3) {
    if (Date.now() > deadline) throw new Error('the nodes did not settle');
    await new Promise<void>((r) => setImmediate(r));
    quiet = nodes.every((n) => n.busy() === 0) ? quiet + 1 : 0;
  }
}

/** Moves the shared virtual clock by `ms`, firing timers in order and settling every node after each. */
export async function advanceAll(
  harness: Pick<TestRuntime, 'clock'>,
  nodes: readonly Runtime[],
  ms: number,
): Promise<void> {
  const target = harness.clock.now() + ms;
  await settleAll(nodes);
  for (let due = harness.clock.nextDue(target); due !== null; due = harness.clock.nextDue(target)) {
    harness.clock.fireNext(due);
    await settleAll(nodes);
  }
  harness.clock.fireNext(target);
  await settleAll(nodes);
}

/**
 * Kills `nodes` as a deploy would, then waits (`KILLED_NODE_DRAIN_MS` of real time at most) until
 * the statements they had already sent are done: the next test's TRUNCATE
 * takes every table's lock and would deadlock with a tick still running.
 */
export async function killAll(nodes: readonly Pick<Runtime, 'kill' | 'busy'>[]): Promise<void> {
  for (const r of nodes) r.kill();
  for (const r of nodes) await drained(r, KILLED_NODE_DRAIN_MS);
}

/**
 * A test's harness (`h`) and the nodes it boots beside it (`others`):
 * after each test the others are killed and the harness closed.
 */
export function nodesOfEachTest(): { h: TestRuntime | undefined; others: Runtime[] } {
  const nodes: { h: TestRuntime | undefined; others: Runtime[] } = { h: undefined, others: [] };
  afterEach(async () => {
    await killAll(nodes.others.splice(0));
    await nodes.h?.close();
    nodes.h = undefined;
  });
  return nodes;
}

/**
 * Boots another machine's node beside the harness `h`: the same store,
 * simulated cluster and clock, `options` for the rest (its `nodeId` must
 * differ from the harness's, or it would be a later boot of the same
 * machine). Its reports land in `errors`; it is killed after the test with
 * `nodes.others`. Resolves once its boot pass is done.
 */
export async function bootBeside(
  nodes: { others: Runtime[] },
  h: TestRuntime,
  options: Omit<RuntimeOptions, 'backend' | 'clock' | 'onError'>,
): Promise<{ runtime: Runtime; errors: unknown[] }> {
  const errors: unknown[] = [];
  const runtime = await createRuntime({
    ...options,
    backend: new SimulatedBackend(h.cluster),
    clock: h.clock,
    onError: (e) => errors.push(e),
  });
  nodes.others.push(runtime);
  await runtime.booted;
  return { runtime, errors };
}
