/**
 * What `roundtable start` asks of the cluster's liveness from its settings
 * (`liveness`): each boot's lock on a Postgres server, none on PGlite or
 * behind a transaction pooler, and the one-Reconciler lock, which neither
 * PGlite nor a transaction pooler can hold.
 */
import { describe, expect, it } from 'vitest';
import { CliError } from '../../src/cli/exitCodes.js';
import { liveness, POOLED_LIVENESS } from '../../src/cli/startNode.js';

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
    const pooled = { reconcileLock: false, ...POOLED_LIVENESS };
    expect(liveness({ ...base, pooler: 'transaction' }, server)).toEqual(pooled);
    expect(liveness({ ...base, pooler: 'transaction', reconcileLock: 'off' }, server)).toEqual(
      pooled,
    );
    // A death is seen within 10 s of the last beat (a poll later at most).
    expect(POOLED_LIVENESS.heartbeatMs * POOLED_LIVENESS.heartbeatStaleBeats).toBe(10_000);
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
