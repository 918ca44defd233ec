import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { CorruptRowError, ValidationError } from '../../src/db/errors.js';
import { getTask } from '../../src/db/tasks.js';
import { getUserCaps, setUserCap } from '../../src/db/userCaps.js';
import { describeEachEngine } from '../support/databases.js';
import { enqueue, rowCounts, steppingClock } from './fixtures.js';

describeEachEngine('user caps', (getDb) => {
  it('sets, overwrites and removes an override', async () => {
    const { db } = getDb();
    const now = steppingClock();
    await setUserCap(db, { userId: 'alice', maxRunning: 2, now: now() });
    await setUserCap(db, { userId: 'bob', maxRunning: 0, now: now() });
    await setUserCap(db, { userId: 'alice', maxRunning: 4, now: now() });
    expect(await getUserCaps(db)).toEqual(
      new Map([
        ['alice', 4],
        ['bob', 0],
      ]),
    );
    expect(await getUserCaps(db, ['bob', 'carol'])).toEqual(new Map([['bob', 0]]));
    expect(await getUserCaps(db, [])).toEqual(new Map());
    await setUserCap(db, { userId: 'alice', maxRunning: null, now: now() });
    expect(await getUserCaps(db)).toEqual(new Map([['bob', 0]]));
  });

  it('rejects a bad cap with a typed error and writes nothing', async () => {
    const { db } = getDb();
    for (const [input, field] of [
      [{ userId: 'alice', maxRunning: -1 }, 'maxRunning'],
      [{ userId: 'alice', maxRunning: 1.5 }, 'maxRunning'],
      [{ userId: 'al ice', maxRunning: 1 }, 'userId'],
    ] as const) {
      const err = await setUserCap(db, { ...input, now: new Date() }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).field).toBe(field);
    }
    await expect(getUserCaps(db, ['ok', 'not ok'])).rejects.toMatchObject({ field: 'userIds.1' });
    expect((await rowCounts(db)).user_caps).toBe(0);
  });

  it('reports a row damaged behind its back as CorruptRowError, not a later crash', async () => {
    const { db } = getDb();
    const { task } = await enqueue(db, 'alice', new Date('2026-07-14T10:00:00Z'));
    await sql`UPDATE tasks SET run_spec = '{"image":"busybox","command":"rm -rf /"}' WHERE id = ${task.id}`.execute(
      db,
    );
    const err = await getTask(db, task.id).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(CorruptRowError);
    expect(err).toMatchObject({ table: 'tasks', rowId: task.id, field: 'run_spec.command' });
  });

  it('keeps session history append-only in the database itself', async () => {
    const { db } = getDb();
    await enqueue(db, 'alice', new Date('2026-07-14T10:00:00Z'));
    await expect(sql`UPDATE session_events SET reason = 'edited'`.execute(db)).rejects.toThrow(
      /append-only/,
    );
    await expect(sql`DELETE FROM session_events`.execute(db)).rejects.toThrow(/append-only/);
  });
});
