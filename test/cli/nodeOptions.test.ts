/**
 * What `roundtable start` asks of the cluster's liveness from its settings
 * (`liveness`): each boot's lock on a Postgres server, none on PGlite or
 * behind a transaction pooler, and the one-Reconciler lock, which neither
 * PGlite nor a transaction pooler can hold.
 */
import { describe, expect, it } from 'vitest';
import { CliError } from '../../src/cli/exitCodes.js';
import * as nodeOptions from '../../src/cli/nodeOptions.js';
import { liveness } from '../../src/cli/nodeOptions.js';
import { runDocExamples } from '../support/docExamples.js';

const server = { engine: 'postgres' as const };
const pglite = { engine: 'pglite' as const };
const base = { bootLock: 'auto', reconcileLock: 'auto', pooler: 'none' } as const;

function cliErrorOf(fn: () => unknown): CliError {
  try {
    fn();
  } catch (error) {
    if (error instanceof CliError) return error;
    throw error;
  }
  throw new Error('expected a CliError');
}

describe('liveness', () => {
  it('holds the boot lock on a server, and leaves the Reconciler lock to the runtime (on there)', () => {
    expect(liveness(base, server)).toEqual({ bootLock: server });
    expect(liveness({ ...base, bootLock: 'off' }, server)).toEqual({});
    expect(liveness({ ...base, reconcileLock: 'off' }, server)).toEqual({
      bootLock: server,
      reconcileLock: false,
    });
  });

  it('behind a transaction pooler: no boot lock, no Reconciler lock, and a watch on fast beats', () => {
    // Beats every 2 s, stale after 5: a death is seen within 10 s of the last beat (a poll later at most).
    const pooled = {
      reconcileLock: false,
      watchBeats: true,
      heartbeatMs: 2_000,
      heartbeatStaleBeats: 5,
      livenessPollMs: 1_000,
    };
    expect(liveness({ ...base, pooler: 'transaction' }, server)).toEqual(pooled);
    expect(liveness({ ...base, pooler: 'transaction', reconcileLock: 'off' }, server)).toEqual(
      pooled,
    );
  });

  it('--dead-after-ms sets the beats (five per window) wherever they are judged', () => {
    const window = (o: { heartbeatMs?: number; heartbeatStaleBeats?: number }) =>
      (o.heartbeatMs ?? 0) * (o.heartbeatStaleBeats ?? 0);
    // With the boot lock the beats are the backstop: no watch of them.
    const locked = liveness({ ...base, deadAfterMs: 45_000 }, server);
    expect(locked).toEqual({ bootLock: server, heartbeatMs: 9_000, heartbeatStaleBeats: 5 });
    // Behind a pooler, and with --boot-lock off, the beats are all there is: watched.
    const pooled = liveness({ ...base, pooler: 'transaction', deadAfterMs: 60_000 }, server);
    expect(window(pooled)).toBe(60_000);
    expect(pooled).toMatchObject({ watchBeats: true, reconcileLock: false, livenessPollMs: 1_000 });
    const unlocked = liveness({ ...base, bootLock: 'off', deadAfterMs: 2_000 }, server);
    expect(window(unlocked)).toBe(2_000);
    expect(unlocked).toMatchObject({ watchBeats: true, livenessPollMs: 250 });
    expect(liveness({ ...base, reconcileLock: 'off', deadAfterMs: 9_000 }, pglite)).toEqual({
      bootLock: pglite,
      reconcileLock: false,
      heartbeatMs: 1_800,
      heartbeatStaleBeats: 5,
    });
  });

  it('refuses a Reconciler lock a transaction pooler cannot hold, and one PGlite cannot take', () => {
    const pooled = cliErrorOf(() =>
      liveness({ ...base, pooler: 'transaction', reconcileLock: 'on' }, server),
    );
    expect(pooled.code).toBe('CLI_CONFIG');
    expect(pooled.message).toMatch(/transaction pooler/);
    expect(cliErrorOf(() => liveness({ ...base, reconcileLock: 'on' }, pglite)).code).toBe(
      'CLI_CONFIG',
    );
  });
});

runDocExamples(new URL('../../src/cli/nodeOptions.ts', import.meta.url), nodeOptions);
