/**
 * The code a bench measures: this checkout, or a baseline commit in a
 * detached worktree beside it (made once, kept, sharing this checkout's
 * node_modules), so that one run measures old and new code side by side
 * on the same machine load. Used by the hot-path and tick A/B suites.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One side of an A/B: a name for the report, its commit, and the root its `src/` is imported from. */
export interface Side {
  name: string;
  commit: string;
  root: string;
}

/** This checkout's root. */
export const ROOT = fileURLToPath(new URL('../', import.meta.url)).replace(/\/$/, '');

export const git = (...a: string[]): string =>
  execFileSync('git', ['-C', ROOT, ...a])
    .toString()
    .trim();

/** This checkout; `+` after the commit when `src/` has uncommitted changes. */
export function currentSide(): Side {
  const commit = git('rev-parse', 'HEAD');
  const dirty = git('status', '--porcelain', 'src') === '' ? '' : '+';
  return { name: `this checkout ${commit.slice(0, 8)}${dirty}`, commit, root: ROOT };
}

/** A detached worktree of `ref` sharing this checkout's node_modules (made once, kept). */
export function baselineSide(ref: string, purpose: string): Side {
  const commit = git('rev-parse', ref);
  const root = join(tmpdir(), `roundtable-${purpose}-${commit.slice(0, 12)}`);
  if (!existsSync(root)) {
    git('worktree', 'add', '--detach', root, commit);
    symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
  }
  return { name: `baseline ${commit.slice(0, 8)}`, commit, root };
}
