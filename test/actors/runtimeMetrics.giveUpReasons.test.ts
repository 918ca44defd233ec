/**
 * `roundtable_give_ups_total` is labelled by the reason's code, never by its
 * free text. A start failure's reason carries the engine's words, which name
 * the run (`start_failed: create service rt-ses_…: …`): each failing session
 * was a new series on /metrics and a new key kept for ever in the node's
 * memory (as was seen on a Swarm node: `reason="owner_lost: its run never
 * began"`, and `start_failed: inspect service rt-ses_…: not found` on a card).
 */
import { afterEach, expect, test, vi } from 'vitest';
import { ContainerError } from '../../src/containers/ContainerError.js';
import { SimulatedBackend } from '../../src/containers/simulated/SimulatedBackend.js';
import { pgliteRuntimes } from '../support/pgliteRuntimes.js';

const runtimes = pgliteRuntimes();

afterEach(() => {
  vi.restoreAllMocks();
});

test('start failures naming their run count under one give-up reason, start_failed', async () => {
  const h = await runtimes.open();
  const start = SimulatedBackend.prototype.start;
  let failures = 0;
  vi.spyOn(SimulatedBackend.prototype, 'start').mockImplementation(function (
    this: SimulatedBackend,
    spec,
  ) {
    // The first start of each task fails as an engine error naming its service.
    if (failures < 3) {
      failures += 1;
      return Promise.reject(
        new ContainerError('engine', `create service rt-${spec.sessionId}: 500 busy`),
      );
    }
    return start.call(this, spec);
  });
  for (const title of ['a', 'b', 'c'])
    await h.runtime.createTask('alice', { title, image: 'runner:v1', command: ['echo', title] });
  await h.advance(20_000);
  const sessions = await h.sessions();
  expect(
    sessions.filter((s) => (s.failureReason ?? '').startsWith('start_failed: create service rt-')),
  ).toHaveLength(3);
  expect(h.runtime.metrics().giveUpsTotal).toEqual({ start_failed: 3 });
});
