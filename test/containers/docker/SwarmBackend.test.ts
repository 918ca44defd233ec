import { describe, expect, it } from 'vitest';
import { SwarmBackend } from '../../../src/containers/docker/SwarmBackend.js';
import { containerContract } from '../contract.js';
import { testNamespace } from '../testNamespace.js';
import { detectEngine, RUNNER_IMAGE } from './engine.js';
import { busyboxCommands, eventuallyReal, killSwarmTask } from './realFixture.js';

const engine = await detectEngine({ swarm: true });

if (engine.ok) {
  const { docker } = engine;
  // This file's own runs: the Swarm suite, the plain Docker suite and the
  // runtime suite share the engine and run in parallel workers.
  const namespace = testNamespace('swarm');
  const newerImage = 'roundtable-runner:repin-test';
  await docker.getImage(RUNNER_IMAGE).tag({ repo: 'roundtable-runner', tag: 'repin-test' });

  containerContract('Docker Swarm (real engine)', () => ({
    backend: new SwarmBackend({ namespace }),
    image: RUNNER_IMAGE,
    newerImage,
    // Never built or pulled: the engine has no registry to get it from either.
    unknownImage: 'roundtable-runner:no-such-tag',
    restarted: () => new SwarmBackend({ namespace }),
    inNamespace: (other) => new SwarmBackend({ namespace: other }),
    unreachable: () => new SwarmBackend({ host: 'unix:///nonexistent/roundtable-docker.sock' }),
    settle: (p) => p,
    eventually: eventuallyReal,
    commands: busyboxCommands,
    replaceContainer: (ref) => killSwarmTask(docker, ref),
  }));
} else if (process.env.CI === 'true') {
  describe('Docker Swarm (real engine)', () => {
    it('needs an engine under CI=true', () => {
      expect.fail(`CI=true but ${engine.reason}`);
    });
  });
} else {
  describe.skip(`Docker Swarm (real engine) skipped: ${engine.reason}`, () => {
    it('runs the container contract against Swarm', () => undefined);
  });
}
