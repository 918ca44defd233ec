import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fc, test } from '@fast-check/vitest';
import { afterAll, describe, expect, it } from 'vitest';
import * as wrapper from '../../src/containers/wrapper.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/containers/wrapper.ts', import.meta.url), wrapper);

const dir = mkdtempSync(join(tmpdir(), 'roundtable-wrapper-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the wrapper exactly as the backends do, with the host's sh. */
function runWrapped(sessionId: string, command: string[]) {
  const [file, ...args] = wrapper.wrapperArgv(command);
  const result = spawnSync(file as string, args, {
    env: { PATH: process.env.PATH ?? '/bin', ...wrapper.wrapperEnv(sessionId, {}, dir) },
    encoding: 'utf8',
  });
  return {
    status: result.status,
    stdout: result.stdout,
    file: readFileSync(wrapper.outputPath(sessionId, dir), 'utf8'),
    marker: readFileSync(wrapper.markerPath(sessionId, dir), 'utf8'),
  };
}

describe('the wrapper script', () => {
  it('tees output, exits with the command’s code and writes it to the marker', () => {
    const run = runWrapped('w1', ['sh', '-c', 'echo out; echo err >&2; exit 7']);
    expect(run.status).toBe(7);
    expect(run.stdout).toBe('out\nerr\n');
    expect(run.file).toBe('out\nerr\n');
    expect(wrapper.parseMarker(run.marker)).toBe(7);
  });

  it('reports a missing command as 127 and leaves no temp file behind', () => {
    const run = runWrapped('w2', ['roundtable-no-such-command']);
    expect(run.status).toBe(127);
    expect(wrapper.parseMarker(run.marker)).toBe(127);
    expect(readdirSync(dir).filter((f) => f.startsWith('.roundtable-exit-'))).toEqual([]);
  });

  it('a rerun replaces the previous marker only when it finishes', () => {
    runWrapped('w3', ['false']);
    const run = runWrapped('w3', ['true']);
    expect(wrapper.parseMarker(run.marker)).toBe(0);
  });

  test.prop([fc.array(fc.string({ unit: 'grapheme-ascii' }), { minLength: 1, maxLength: 5 })], {
    numRuns: 40,
  })('passes any argv through untouched (nothing is spliced into the script)', (words) => {
    const run = runWrapped('w4', ['printf', '%s\\n', ...words]);
    expect(run.status).toBe(0);
    expect(run.file).toBe(words.map((w) => `${w}\n`).join(''));
  });
});
