/**
 * A createTestRuntime that rejects closes what it opened: it hands back no
 * harness, so the test cannot. Run as a real process, since what a leak
 * does is keep one alive: a refused option (`pollMs: -1`, refused by
 * createRuntime after the harness had opened its own PGlite) left that
 * PGlite open and the process never exited.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const SCRIPT = `
import { createTestRuntime } from 'roundtable/testing';
try {
  await createTestRuntime({ pollMs: -1 });
  console.log('opened');
} catch (error) {
  console.log('rejected', error.code);
}
`;

test('a process whose createTestRuntime rejected exits by itself', () => {
  const r = spawnSync(
    process.execPath,
    ['--conditions=roundtable-source', '--import', 'tsx', '--input-type=module', '-e', SCRIPT],
    { cwd: ROOT, encoding: 'utf8', timeout: 40_000, env: { PATH: process.env.PATH ?? '' } },
  );
  expect(r.stdout).toBe('rejected RUNTIME_INVALID_OPTION\n');
  // A leak is the timeout's SIGTERM (status null), not an exit.
  expect(r.signal).toBeNull();
  expect(r.status).toBe(0);
}, 90_000);
