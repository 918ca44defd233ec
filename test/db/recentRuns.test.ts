import { expect, it } from 'vitest';
import { ValidationError } from '../../src/db/errors.js';
import { recentRuns } from '../../src/db/recentRuns.js';
import { describeEachEngine } from '../support/databases.js';
import { build, type Plan } from './fixtures.js';

const PLANS: Plan[] = [
  // 90 s, succeeded at 10:02:30
  {
    user: 'a',
    enq: '10:00:00',
    claim: { at: '10:01:00', owner: 'n' },
    end: { at: '10:02:30', as: 'succeeded' },
  },
  // 4 s, failed at 10:01:05: the oldest end
  {
    user: 'b',
    enq: '10:00:00',
    claim: { at: '10:01:01', owner: 'n' },
    end: { at: '10:01:05', as: 'failed' },
  },
  // cancelled while running: says nothing of how long work takes
  {
    user: 'c',
    enq: '10:00:00',
    claim: { at: '10:01:00', owner: 'n' },
    end: { at: '10:01:30', as: 'cancelled' },
  },
  // cancelled in line, still running, still queued: not runs that ended
  { user: 'd', enq: '10:00:00', end: { at: '10:00:30', as: 'cancelled' } },
  { user: 'e', enq: '10:00:00', claim: { at: '10:03:00', owner: 'n' } },
  { user: 'f', enq: '10:00:00' },
  // 60 s, succeeded at 10:05:00: the newest
  {
    user: 'g',
    enq: '10:03:00',
    claim: { at: '10:04:00', owner: 'n' },
    end: { at: '10:05:00', as: 'succeeded' },
  },
];

describeEachEngine('recent runs', (getDb) => {
  it('are the last runs that succeeded or failed, oldest first, each as long as it held its runner', async () => {
    const { db } = getDb();
    for (const p of PLANS) await build(db, p);
    const all = await recentRuns(db, 50);
    expect(all.map((r) => r.ms)).toEqual([4_000, 90_000, 60_000]);
    expect(all.every((r) => r.sessionId.startsWith('ses_'))).toBe(true);
    // The limit keeps the newest.
    expect((await recentRuns(db, 2)).map((r) => r.ms)).toEqual([90_000, 60_000]);
    // Another node reading the same rows gets the same.
    const other = await getDb().connectAnother();
    expect(await recentRuns(other.db, 50)).toEqual(all);
  });

  it('refuses a limit out of range', async () => {
    const { db } = getDb();
    for (const limit of [0, 1_001, 1.5]) {
      await expect(recentRuns(db, limit)).rejects.toBeInstanceOf(ValidationError);
    }
  });
});
