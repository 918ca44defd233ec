/**
 * `follow` on the real engine, plain Docker and Swarm: a run started by one
 * backend instance is followed by another (as an adopting node's would be),
 * which sees the lines written after it began and the whole output, in
 * order, by the end; a stop reads to the end first; a replaced container
 * ends the follow. Real time: each test is a few seconds.
 */
import type Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import type { ContainerBackend, RunRef } from '../../../src/containers/ContainerBackend.js';
import { DockerBackend } from '../../../src/containers/docker/DockerBackend.js';
import { SwarmBackend } from '../../../src/containers/docker/SwarmBackend.js';
import { newSessionId } from '../contract.js';
import { testNamespace } from '../testNamespace.js';
import { detectEngine, RUNNER_IMAGE } from './engine.js';
import { eventuallyReal, killSwarmTask } from './realFixture.js';

interface Kind {
  name: string;
  swarm: boolean;
  make: (namespace: string) => ContainerBackend;
  /** The run's container dies and another (empty `/tmp`) takes its place. */
  replace: (docker: Docker, ref: RunRef) => Promise<void>;
}

const kinds: Kind[] = [
  {
    name: 'plain Docker',
    swarm: false,
    make: (namespace) => new DockerBackend({ namespace }),
    replace: async (docker, ref) => {
      await docker.getContainer(ref.handle).restart({ t: 0 });
    },
  },
  {
    name: 'Docker Swarm',
    swarm: true,
    make: (namespace) => new SwarmBackend({ namespace }),
    replace: killSwarmTask,
  },
];

/** Lines `línea <i>` (a two-byte character in each), one every 0.4 s. */
const slowLines = (n: number) => [
  'sh',
  '-c',
  `i=1; while [ $i -le ${n} ]; do echo "línea $i"; i=$((i+1)); sleep 0.4; done`,
];
const expected = (n: number) => Array.from({ length: n }, (_, i) => `línea ${i + 1}\n`).join('');

function follower(backend: ContainerBackend, ref: RunRef) {
  const chunks: string[] = [];
  const abort = new AbortController();
  let ended = false;
  backend.follow?.(ref, {
    signal: abort.signal,
    onOutput: (c) => chunks.push(c),
    onEnd: () => {
      ended = true;
    },
  });
  return { text: () => chunks.join(''), stop: () => abort.abort(), ended: () => ended };
}

for (const kind of kinds) {
  const engine = await detectEngine({ swarm: kind.swarm });
  if (!engine.ok) {
    if (process.env.CI === 'true')
      describe(`${kind.name} follow (real engine)`, () => {
        it('needs an engine under CI=true', () => {
          expect.fail(`CI=true but ${engine.reason}`);
        });
      });
    else
      describe.skip(`${kind.name} follow (real engine) skipped: ${engine.reason}`, () => {
        it('follows a run another instance started', () => undefined);
      });
    continue;
  }
  const { docker } = engine;
  const namespace = testNamespace(kind.swarm ? 'swarm-follow' : 'docker-follow');

  describe(`${kind.name} follow (real engine)`, () => {
    /** Starts a run with one instance; `test` gets a second one and the ref; removed however it ends. */
    const withRun = async (
      command: string[],
      test: (adopter: ContainerBackend, ref: RunRef) => Promise<void>,
    ) => {
      const owner = kind.make(namespace);
      const sessionId = newSessionId('follow');
      const ref = { sessionId, handle: owner.handleOf(sessionId) ?? '' };
      try {
        await owner.start({ sessionId, image: RUNNER_IMAGE, command });
        await test(kind.make(namespace), ref);
      } finally {
        await owner.remove(ref);
      }
    };
    const marked = (b: ContainerBackend, ref: RunRef) =>
      eventuallyReal(
        async () => ((await b.observe(ref)).marker !== null ? true : undefined),
        20_000,
      );

    it('another instance sees the lines written after it began, and the whole output in order by the end', async () => {
      await withRun(slowLines(10), async (adopter, ref) => {
        await eventuallyReal(
          async () => ((await adopter.readOutput(ref).catch(() => null))?.text ? true : undefined),
          20_000,
        );
        const before = (await adopter.readOutput(ref)).text;
        const f = follower(adopter, ref);
        // Its first read: what the file held then.
        await eventuallyReal(async () => (f.text().length > 0 ? true : undefined), 10_000);
        const first = f.text();
        expect(first.startsWith(before)).toBe(true);
        // A line written after that read, seen while the run still runs.
        await eventuallyReal(
          async () => (f.text().length > first.length ? true : undefined),
          10_000,
        );
        expect((await adopter.observe(ref)).marker).toBeNull();
        await marked(adopter, ref);
        f.stop();
        await eventuallyReal(async () => (f.ended() ? true : undefined), 20_000);
        expect(f.text()).toBe(expected(10));
      });
    }, 60_000);

    it('a stop reads to the end first', async () => {
      const n = 3000; // ~30 KB: more than one poll's worth of a slow reader, and all of it due
      const command = [
        'sh',
        '-c',
        `i=1; while [ $i -le ${n} ]; do echo "línea $i"; i=$((i+1)); done`,
      ];
      await withRun(command, async (adopter, ref) => {
        await marked(adopter, ref);
        const f = follower(adopter, ref);
        f.stop(); // before its first read even went out
        await eventuallyReal(async () => (f.ended() ? true : undefined), 20_000);
        expect(f.text()).toBe(expected(n));
      });
    }, 60_000);

    it('a replaced container (an empty /tmp) ends the follow', async () => {
      await withRun(slowLines(100), async (adopter, ref) => {
        const f = follower(adopter, ref);
        await eventuallyReal(
          async () => (f.text().includes('línea 2\n') ? true : undefined),
          20_000,
        );
        await kind.replace(docker, ref);
        await eventuallyReal(async () => (f.ended() ? true : undefined), 20_000);
        f.stop();
      });
    }, 60_000);
  });
}
