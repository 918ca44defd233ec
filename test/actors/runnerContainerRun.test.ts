/**
 * The ContainerRun chart's I/O as a TaskRunner provides it
 * (src/actors/runnerContainerRun.ts): a backend's `follow` is documented
 * never to throw, and one that does anyway must not fail the runner that
 * adopted the run (its supervisor would restart it into the same throw).
 * The run goes on and its output shows when it ends, as on a backend with
 * no `follow`; the throw goes to `onError`.
 */
import { afterEach, expect, test } from 'vitest';
import type { ContainerBackend } from '../../src/containers/ContainerBackend.js';
import { SimulatedBackend } from '../../src/containers/simulated/SimulatedBackend.js';
import { pgliteRuntimes } from '../support/pgliteRuntimes.js';

const runtimes = pgliteRuntimes();
const proto = SimulatedBackend.prototype as Partial<Pick<ContainerBackend, 'follow'>>;
// The simulated backend's own follow, put back after each test (a delete would drop it for good).
const ownFollow = proto.follow;
afterEach(() => {
  proto.follow = ownFollow;
});

test('an adopted run whose backend follow throws: reported, and the run ends with its whole output', async () => {
  const h = await runtimes.open();
  const { taskId, sessionId } = await h.runtime.createTask('alice', {
    title: 't',
    image: 'runner:v1',
    command: ['agent', '20'],
  });
  await h.advance(5_000);
  // Give the next boot's backend a follow that throws.
  proto.follow = () => {
    throw new Error('follow bug');
  };
  await h.deploy();
  await h.advance(40_000);
  const events = (await h.events(sessionId)).map((e) => e.reason);
  expect(events).toContain('adopted');
  const card = h.runtime.cards('alice').find((c) => c.taskId === taskId);
  expect(card?.status).toBe('succeeded');
  expect(card?.lastOutput.at(-1)).toBe('[agent] done');
  expect(h.errors.map((e) => (e as Error).message)).toContain('follow bug');
  // Adopted once: no crash sent the runner round again.
  expect(events.filter((r) => r === 'adopted')).toHaveLength(1);
  expect(events).not.toContain('runner_lost');
});
