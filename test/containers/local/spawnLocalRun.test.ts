/**
 * A local run's start as a task can shape it: its env may set PATH to
 * anything, and a spawn that fails must come back as a start failure, never
 * as an 'error' event nobody listens to (which ends the node).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { isContainerError } from '../../../src/containers/ContainerError.js';
import { hostProcessTable } from '../../../src/containers/local/processTable.js';
import { RunDirectory } from '../../../src/containers/local/runDirectory.js';
import * as spawnModule from '../../../src/containers/local/spawnLocalRun.js';
import { spawnLocalRun } from '../../../src/containers/local/spawnLocalRun.js';
import { runDocExamples } from '../../support/docExamples.js';
import { newSessionId } from '../contract.js';
import { localFixture } from './localFixture.js';

runDocExamples(
  new URL('../../../src/containers/local/spawnLocalRun.ts', import.meta.url),
  spawnModule,
);

describe('a task’s PATH', () => {
  const fx = localFixture();

  it('a PATH with no shell and no tools in it still runs, and its exit is recorded', async () => {
    const sessionId = newSessionId('path');
    const { handle } = await fx.backend.start({
      sessionId,
      image: 'host',
      command: ['sh', '-c', 'echo "on $PATH"; exit 3'],
      env: { PATH: '/nonexistent' },
    });
    const ref = { handle, sessionId };
    const chunks: string[] = [];
    const exit = await fx.backend.attach(ref, { onOutput: (c) => chunks.push(c) });
    expect(exit).toEqual({ exitCode: 3 });
    // The task's PATH comes first; the host's follows so that the wrapper's tools are found.
    expect(chunks.join('')).toMatch(/^on \/nonexistent:/);
    expect((await fx.backend.observe(ref)).marker).toEqual({ exitCode: 3 });
    await fx.backend.remove(ref);
  });
});

describe('a spawn that fails', () => {
  const root = mkdtempSync(join(tmpdir(), 'rt-spawn-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('throws an engine error, and leaves no listener-less error event behind', async () => {
    const files = new RunDirectory(root, 'ns');
    const sessionId = newSessionId('nowork');
    expect(files.create(sessionId)).toBe(true);
    // The work directory is gone: the spawn fails with ENOENT after returning.
    rmSync(files.workDirOf(sessionId), { recursive: true });
    let thrown: unknown;
    try {
      spawnLocalRun(
        sessionId,
        { sessionId, image: 'host', command: ['true'] },
        {
          files,
          processes: hostProcessTable(),
          clock: new SimulatedClock(),
          baseEnv: { PATH: '/usr/bin:/bin' },
          outputPollMs: 1_000,
        },
      );
    } catch (error) {
      thrown = error;
    }
    expect(isContainerError(thrown) && thrown.code).toBe('engine');
    expect((thrown as Error).message).toMatch(/no process was created/);
    // The error event arrives on a later turn: unheard, it would fail this run.
    await new Promise((resolve) => setTimeout(resolve, 50));
  });
});
