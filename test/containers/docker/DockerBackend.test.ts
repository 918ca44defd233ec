import { describe, expect, it } from 'vitest';
import { DockerBackend } from '../../../src/containers/docker/DockerBackend.js';
import { containerContract } from '../contract.js';
import { testNamespace } from '../testNamespace.js';
import { detectEngine, RUNNER_IMAGE } from './engine.js';
import { busyboxCommands, eventuallyReal } from './realFixture.js';

const engine = await detectEngine({ swarm: false });

if (engine.ok) {
  const { docker } = engine;
  // This file's own runs: the Swarm suite, the plain Docker suite and the
  // runtime suite share the engine and run in parallel workers.
  const namespace = testNamespace('docker');
  const newerImage = 'roundtable-runner:repin-test-docker';
  await docker.getImage(RUNNER_IMAGE).tag({ repo: 'roundtable-runner', tag: 'repin-test-docker' });

  containerContract('plain Docker (real engine)', () => ({
    backend: new DockerBackend({ namespace }),
    image: RUNNER_IMAGE,
    newerImage,
    // Never built or pulled: the engine has no registry to get it from either.
    unknownImage: 'roundtable-runner:no-such-tag',
    restarted: () => new DockerBackend({ namespace }),
    inNamespace: (other) => new DockerBackend({ namespace: other }),
    unreachable: () => new DockerBackend({ host: 'unix:///nonexistent/roundtable-docker.sock' }),
    settle: (p) => p,
    eventually: eventuallyReal,
    commands: busyboxCommands,
    // The engine restarts the container in place: same name, later start, fresh tmpfs.
    replaceContainer: async (ref) => {
      await docker.getContainer(ref.handle).restart({ t: 0 });
    },
  }));
} else if (process.env.CI === 'true') {
  describe('plain Docker (real engine)', () => {
    it('needs an engine under CI=true', () => {
      expect.fail(`CI=true but ${engine.reason}`);
    });
  });
} else {
  describe.skip(`plain Docker (real engine) skipped: ${engine.reason}`, () => {
    it('runs the container contract against plain Docker', () => undefined);
  });
}
