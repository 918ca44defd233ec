/**
 * `withReconcilerLock` keeps the pass's own error when giving the lock back
 * fails too. Driven through a Kysely whose driver answers the lock queries
 * itself, so the failing unlock is certain and no server is needed.
 */
import { describe, expect, it } from 'vitest';
import { ReconcilerUnlockError, withReconcilerLock } from '../../src/actors/reconciler.js';
import { fakeDb as fakeKysely } from './fakeDb.js';

function fakeDb(options: { lockFree: boolean; unlockFails: boolean }) {
  return fakeKysely(async (sql) => {
    if (sql.includes('pg_try_advisory_lock')) return { rows: [{ ok: options.lockFree }] };
    if (sql.includes('pg_advisory_unlock') && options.unlockFails) {
      throw new Error('Connection terminated unexpectedly');
    }
    return { rows: [] };
  });
}

describe('withReconcilerLock when the unlock fails', () => {
  it('a failed pass and a failed unlock: an AggregateError of both, the pass first', async () => {
    const { db } = fakeDb({ lockFree: true, unlockFails: true });
    const boom = new Error('pass failed');
    const error = await withReconcilerLock(db, async () => {
      throw boom;
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AggregateError);
    const [pass, unlock] = (error as AggregateError).errors;
    expect(pass).toBe(boom);
    expect(unlock).toBeInstanceOf(ReconcilerUnlockError);
    expect(unlock).toMatchObject({ code: 'RECONCILER_UNLOCK_FAILED' });
    expect((unlock as Error).cause).toMatchObject({
      message: 'Connection terminated unexpectedly',
    });
  });

  it('a pass that worked and a failed unlock: the unlock error, with its cause', async () => {
    const { db } = fakeDb({ lockFree: true, unlockFails: true });
    const error = await withReconcilerLock(db, async () => 'report').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReconcilerUnlockError);
    expect((error as Error).cause).toBeInstanceOf(Error);
  });

  it('a healthy unlock keeps the outcome; a busy lock runs nothing and tries no unlock', async () => {
    const ok = fakeDb({ lockFree: true, unlockFails: false });
    await expect(withReconcilerLock(ok.db, async () => 'report')).resolves.toBe('report');
    const boom = new Error('pass failed');
    await expect(
      withReconcilerLock(ok.db, async () => {
        throw boom;
      }),
    ).rejects.toBe(boom);
    const busy = fakeDb({ lockFree: false, unlockFails: true });
    let ran = false;
    await expect(
      withReconcilerLock(busy.db, async () => {
        ran = true;
      }),
    ).resolves.toBeNull();
    expect(ran).toBe(false);
    expect(busy.seen.some((q) => q.includes('pg_advisory_unlock'))).toBe(false);
  });
});
