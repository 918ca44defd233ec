/**
 * The start estimates' durations survive a deploy: a UI server over a node
 * that just booted serves the runs that ended before it, from the rows
 * (`recentRuns`), and then the runs it sees end, each once.
 */
import { afterEach, expect, it } from 'vitest';
import { createTestRuntime, type TestRuntime } from '../../src/testing/index.js';
import { createUiServer, type UiServer } from '../../src/ui-server/createUiServer.js';
import { ALICE, TOKENS } from './wsHarness.js';

let h: TestRuntime | undefined;
let server: UiServer | undefined;
afterEach(async () => {
  await server?.close();
  await h?.close();
  server = h = undefined;
});

const quiet = { info: () => {}, warn: () => {}, error: () => {} };

it('a node that just booted serves the durations of the runs that ended before it, then the ones it sees, once each', async () => {
  h = await createTestRuntime({ caps: { maxRunning: 2, defaultUserCap: 2 } });
  for (const seconds of ['20', '40']) {
    await h.runtime.submit('alice', {
      title: seconds,
      image: 'runner:v1',
      command: ['agent', seconds],
    });
  }
  await h.advance(45_000);
  expect((await h.sessions()).map((s) => s.status)).toEqual(['succeeded', 'succeeded']);
  // One more, running across the deploy.
  await h.runtime.submit('alice', {
    title: 'across',
    image: 'runner:v1',
    command: ['agent', '30'],
  });
  await h.advance(1_000);
  const rt = await h.deploy();
  await rt.booted;
  server = await createUiServer({
    source: rt,
    commands: rt,
    tokens: TOKENS,
    port: 0,
    host: '127.0.0.1',
    logger: quiet,
  });
  const stats = async () => {
    const res = await fetch(`${server?.url}/api/stats`, {
      headers: { authorization: `Bearer ${ALICE}` },
    });
    return ((await res.json()) as { recentDurationsMs: number[] }).recentDurationsMs;
  };
  // The read from the rows is not awaited by the server: it lands within a few turns.
  let seen: number[] = [];
  for (let i = 0; i < 50 && seen.length < 2; i++) {
    seen = await stats();
    await new Promise<void>((r) => setTimeout(r, 10));
  }
  // Each run from its grant to its end: the simulated agent's seconds, give or take the steps' turns.
  expect(seen).toHaveLength(2);
  expect(seen[0]).toBeGreaterThanOrEqual(20_000);
  expect(seen[0]).toBeLessThan(22_000);
  expect(seen[1]).toBeGreaterThanOrEqual(40_000);
  expect(seen[1]).toBeLessThan(42_000);
  // The adopted run ends under this server: it is added, once.
  await h.advance(60_000);
  const after = await stats();
  expect(after).toHaveLength(3);
  expect(after.slice(0, 2)).toEqual(seen);
});
