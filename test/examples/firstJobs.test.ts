/**
 * examples/first-jobs.mjs as docs/library.md shows it, run as a real process
 * on the checkout's sources (the `roundtable-source` export condition, through tsx): two
 * jobs on PGlite in memory and the local backend, to the end. The packed
 * package runs the same file in CI (scripts/packCheck.ts).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('examples/first-jobs.mjs', () => {
  it('runs two jobs to the end and exits 0, with no warning', () => {
    const r = spawnSync(
      process.execPath,
      ['--conditions=roundtable-source', '--import', 'tsx', 'examples/first-jobs.mjs'],
      { cwd: ROOT, encoding: 'utf8', timeout: 170_000, env: { PATH: process.env.PATH ?? '' } },
    );
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('greet: done, exit 0, output "hello\\n"');
    expect(r.stdout).toContain('count: done, exit 0, output "1\\n2\\n"');
    expect(r.stdout).toContain('entry points: client function, machines give_up, clocks true,true');
  }, 180_000);
});
