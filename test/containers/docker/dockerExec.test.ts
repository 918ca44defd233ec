/**
 * `startExec` and `collectExec` on the real engine: an abort closes the
 * exec's hijacked socket and rejects at once with the abort's reason, and
 * an already-aborted signal sends the engine nothing. Real time, a keepalive
 * container of the runner image, removed however the suite ends.
 */
import { Socket } from 'node:net';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEEPALIVE_COMMAND } from '../../../src/containers/docker/DockerRunBackend.js';
import { collectExec, startExec } from '../../../src/containers/docker/dockerExec.js';
import { settledWithin } from '../../support/within.js';
import { newSessionId } from '../contract.js';
import { testNamespace } from '../testNamespace.js';
import { detectEngine, RUNNER_IMAGE } from './engine.js';

/** A client that counts its requests and keeps every hijacked socket it was handed. */
function recordingClient(): { docker: Docker; requests: string[]; sockets: Socket[] } {
  const docker = new Docker();
  const requests: string[] = [];
  const sockets: Socket[] = [];
  type Dial = (options: { path: string }, callback: (err: unknown, data: unknown) => void) => void;
  const modem = docker.modem as { dial: Dial };
  const dial = modem.dial.bind(modem);
  modem.dial = (options, callback) => {
    requests.push(options.path);
    dial(options, (err, data) => {
      if (data instanceof Socket) sockets.push(data);
      callback(err, data);
    });
  };
  return { docker, requests, sockets };
}

const engine = await detectEngine({ swarm: false });

if (engine.ok) {
  describe('docker exec (real engine)', () => {
    const name = `rt-${newSessionId('exec')}`;
    const namespace = testNamespace('exec');
    beforeAll(async () => {
      const container = await engine.docker.createContainer({
        name,
        Image: RUNNER_IMAGE,
        Cmd: KEEPALIVE_COMMAND,
        Labels: { 'roundtable.namespace': namespace },
        HostConfig: { NetworkMode: 'none' },
      });
      await container.start();
    }, 30_000);
    afterAll(async () => {
      await engine.docker.getContainer(name).remove({ force: true });
    }, 30_000);

    it('collects a command’s output and exit code, and lets go of its socket', async () => {
      const { docker, sockets } = recordingClient();
      const result = await collectExec(
        docker,
        name,
        ['sh', '-c', 'printf hi; exit 3'],
        64,
        new AbortController().signal,
      );
      expect(result).toMatchObject({ exitCode: 3, overflowed: false });
      expect(result.stdout.toString()).toBe('hi');
      expect(sockets).toHaveLength(1);
      expect(sockets[0]?.destroyed).toBe(true);
    }, 20_000);

    it('an abort mid-exec rejects at once with its reason and closes the hijacked socket', async () => {
      const { docker, sockets } = recordingClient();
      const controller = new AbortController();
      const reason = new Error('deadline passed');
      const read = collectExec(docker, name, ['sleep', '30'], 64, controller.signal);
      // Aborted once the stream is open, so it is the stream the abort must close.
      const deadline = Date.now() + 10_000;
      while (sockets.length === 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(sockets).toHaveLength(1);
      controller.abort(reason);
      const settled = await settledWithin(read, 'the aborted exec', 2000);
      expect(settled).toEqual({ ok: false, error: reason });
      expect(sockets[0]?.destroyed).toBe(true);
    }, 20_000);

    it('an abort while the exec is being set up rejects with its reason and leaves no socket open', async () => {
      const { docker, sockets } = recordingClient();
      const controller = new AbortController();
      const reason = new Error('deadline passed');
      const started = startExec(
        docker,
        name,
        ['sleep', '30'],
        {},
        { stdout: () => undefined, stderr: () => undefined },
        controller.signal,
      );
      setTimeout(() => controller.abort(reason), 1);
      const settled = await settledWithin(started, 'the aborted start', 2000);
      if (settled.ok) {
        // Started before the abort: then `done` is what the abort ends.
        expect(await settledWithin(settled.value.done, 'done', 2000)).toEqual({
          ok: false,
          error: reason,
        });
      } else expect(settled.error).toBe(reason);
      expect(sockets.every((s) => s.destroyed)).toBe(true);
    }, 20_000);

    it('an already-aborted signal never starts the exec: the engine hears nothing', async () => {
      const { docker, requests } = recordingClient();
      const reason = new Error('too late');
      const settled = await settledWithin(
        collectExec(docker, name, ['touch', '/tmp/ran'], 64, AbortSignal.abort(reason)),
        'the pre-aborted exec',
        2000,
      );
      expect(settled).toEqual({ ok: false, error: reason });
      expect(requests).toEqual([]);
      const check = await collectExec(
        engine.docker,
        name,
        ['sh', '-c', 'test -e /tmp/ran'],
        64,
        new AbortController().signal,
      );
      expect(check.exitCode).toBe(1);
    }, 20_000);
  });
} else if (process.env.CI === 'true') {
  describe('docker exec (real engine)', () => {
    it('needs an engine under CI=true', () => {
      expect.fail(`CI=true but ${engine.reason}`);
    });
  });
} else {
  describe.skip(`docker exec (real engine) skipped: ${engine.reason}`, () => {
    it('an abort closes the exec’s socket', () => undefined);
  });
}
