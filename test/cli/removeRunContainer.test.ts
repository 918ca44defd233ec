/**
 * What `cancel` through the rows does with a cancelled run's container
 * (src/cli/removeRunContainer.ts): a Swarm service removed through the
 * engine the configuration names (real engine), nothing to remove, and an
 * engine it cannot reach. A local run its node left is removed in
 * test/cli/commands/taskCommands.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { cliDefaults } from '../../src/cli/cliConfig.js';
import * as removal from '../../src/cli/removeRunContainer.js';
import { SwarmBackend } from '../../src/containers/docker/SwarmBackend.js';
import { newId } from '../../src/db/index.js';
import { detectEngine, RUNNER_IMAGE } from '../containers/docker/engine.js';
import { testNamespace } from '../containers/testNamespace.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/cli/removeRunContainer.ts', import.meta.url), removal);

const config = { ...cliDefaults(), dataDir: '/nonexistent/rt' };

describe('removeRunContainer', () => {
  it('has nothing to remove for a run with no handle, or a simulated one', async () => {
    expect(
      await removal.removeRunContainer(config, { id: 'ses_1', backend: null, handle: null }),
    ).toMatchObject({ kind: 'none', why: expect.stringContaining('no container recorded yet') });
    expect(
      await removal.removeRunContainer(config, {
        id: 'ses_1',
        backend: 'simulated',
        handle: 'rt-ses_1',
      }),
    ).toEqual({ kind: 'none', why: 'a simulated run lives and ends with its node' });
  });

  it("leaves a container whose engine it cannot reach to the nodes' next pass", async () => {
    const left = await removal.removeRunContainer(
      { ...config, dockerHost: 'unix:///nonexistent/docker.sock' },
      { id: 'ses_1', backend: 'swarm', handle: 'rt-ses_1' },
    );
    expect(left).toMatchObject({ kind: 'left', backend: 'swarm', handle: 'rt-ses_1' });
    expect(removal.removalLine(left)).toMatch(
      /^its container rt-ses_1 \(swarm\) was not removed from here: cannot reach the Docker engine at unix:\/\/\/nonexistent\/docker\.sock: .*; a node's next reconcile pass removes it$/,
    );
  });
});

const engine = await detectEngine({ swarm: true });
const needEngine = !engine.ok && process.env.CI !== 'true';

describe('removeRunContainer on Docker Swarm', () => {
  it.skipIf(needEngine)(
    `removes the service a cancelled row names, in the configured namespace${engine.ok ? '' : ` (skipped: ${engine.reason})`}`,
    async () => {
      expect(engine.ok, engine.ok ? '' : `CI=true but ${engine.reason}`).toBe(true);
      if (!engine.ok) return;
      const namespace = testNamespace('cli-cancel');
      const swarm = new SwarmBackend({ namespace });
      const sessionId = newId('session');
      const { handle } = await swarm.start({
        sessionId,
        image: RUNNER_IMAGE,
        command: ['sleep', '600'],
      });
      try {
        const services = () =>
          engine.docker.listServices({ filters: { name: [handle] } }).then((l) => l.length);
        expect(await services()).toBe(1);
        const done = await removal.removeRunContainer(
          { ...config, dockerHost: process.env.DOCKER_HOST, namespace },
          { id: sessionId, backend: 'swarm', handle },
        );
        expect(done).toEqual({ kind: 'removed', backend: 'swarm', handle });
        expect(await services()).toBe(0);
      } finally {
        await swarm.remove({ sessionId, handle }).catch(() => undefined);
      }
    },
    60_000,
  );
});
