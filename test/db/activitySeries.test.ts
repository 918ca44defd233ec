import { expect, it } from 'vitest';
import { readActivity } from '../../src/db/activitySeries.js';
import { ValidationError } from '../../src/db/errors.js';
import { describeEachEngine } from '../support/databases.js';
import { build, type Plan, T } from './fixtures.js';

// Two nodes' sessions on one database; each row below is worked by hand
// into the expected columns (sampled at 10:01, 10:02, 10:03, 10:04, 10:04:30).
const PLANS: Plan[] = [
  // a: waits 130 s, runs on node-a until 10:02:30.
  {
    user: 'alice',
    enq: '09:58:00',
    claim: { at: '10:00:10', owner: 'node-a@1' },
    end: { at: '10:02:30', as: 'succeeded' },
  },
  // b: waits 30 s, fails on node-b at 10:03:10.
  {
    user: 'bob',
    enq: '10:00:20',
    claim: { at: '10:00:50', owner: 'node-b@1' },
    end: { at: '10:03:10', as: 'failed' },
  },
  // c: waits 60 s, still running.
  { user: 'alice', enq: '10:00:30', claim: { at: '10:01:30', owner: 'node-b@1' } },
  // d: queued from 10:01:00 until cancelled at 10:03:00 (never ran: not a failure).
  { user: 'bob', enq: '10:01:00', end: { at: '10:03:00', as: 'cancelled' } },
  // e: queued from 10:02:00 on.
  { user: 'carol', enq: '10:02:00' },
  // h: waits 35 s, fails at 10:00:55.
  {
    user: 'carol',
    enq: '10:00:05',
    claim: { at: '10:00:40', owner: 'node-a@1' },
    end: { at: '10:00:55', as: 'failed' },
  },
  // i: running from before the window, ends exactly at 10:01:00 (the first sample: not running there).
  {
    user: 'dave',
    enq: '09:57:00',
    claim: { at: '09:58:00', owner: 'node-a@1' },
    end: { at: '10:01:00', as: 'succeeded' },
  },
  // j: running from before the window on.
  { user: 'dave', enq: '09:59:00', claim: { at: '09:59:30', owner: 'node-b@1' } },
  // Before the window, and after `at`: in no bucket.
  {
    user: 'alice',
    enq: '09:50:00',
    claim: { at: '09:51:00', owner: 'node-a@1' },
    end: { at: '09:55:00', as: 'failed' },
  },
  { user: 'alice', enq: '10:04:40' },
];

const EXPECTED = {
  bucketSeconds: 60,
  t: ['10:00:00', '10:01:00', '10:02:00', '10:03:00', '10:04:00'].map((s) => T(s).getTime() / 1000),
  queued: [2, 2, 1, 1, 1],
  running: [3, 4, 3, 2, 2],
  waitP50: [35, 60, null, null, null],
  waitP95: [130, 60, null, null, null],
  succeeded: [0, 1, 1, 0, 0],
  failed: [1, 0, 0, 1, 0],
};

describeEachEngine('activity series', (getDb) => {
  it('counts the window per minute from the rows, the same through another connection', async () => {
    const { db } = getDb();
    for (const p of PLANS) await build(db, p);
    const series = await readActivity(db, { minutes: 5, at: T('10:04:30') });
    expect(series).toEqual(EXPECTED);
    // Another node reading the same rows draws the same picture.
    const other = await getDb().connectAnother();
    expect(await readActivity(other.db, { minutes: 5, at: T('10:04:30') })).toEqual(EXPECTED);
    // A one-minute window is the last bucket, sampled at `at`.
    expect(await readActivity(db, { minutes: 1, at: T('10:04:30') })).toMatchObject({
      t: [T('10:04:00').getTime() / 1000],
      queued: [1],
      running: [2],
    });
  });

  it('gives an empty store a full row of zeros and refuses a bad window', async () => {
    const { db } = getDb();
    const series = await readActivity(db, { minutes: 60, at: T('10:00:00') });
    expect(series.t).toHaveLength(60);
    expect(series.queued.every((n) => n === 0)).toBe(true);
    expect(series.waitP95.every((n) => n === null)).toBe(true);
    for (const minutes of [0, 1441, 1.5]) {
      await expect(readActivity(db, { minutes, at: T('10:00:00') })).rejects.toBeInstanceOf(
        ValidationError,
      );
    }
    await expect(readActivity(db, { minutes: 5, at: new Date(Number.NaN) })).rejects.toThrow(
      /invalid at/,
    );
  });
});
