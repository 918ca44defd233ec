/**
 * Per-user concurrency overrides. A user without a row gets the runtime's
 * default cap; the row only records exceptions.
 */
import { z } from 'zod';
import { CorruptRowError } from './errors.js';
import * as f from './inputs.js';
import { parseOrThrow } from './parseOrThrow.js';
import type { Db } from './transaction.js';

const setInput = z.strictObject({
  userId: f.name,
  /** Null removes the override. Zero pauses the user: their sessions stay queued. */
  maxRunning: f.maxRunning.nullable(),
  now: f.now,
});
export type SetUserCapInput = z.input<typeof setInput>;

/** Sets (or with `maxRunning: null` removes) a user's cap. */
export async function setUserCap(db: Db, input: SetUserCapInput): Promise<void> {
  const i = parseOrThrow(setInput, input, '');
  if (i.maxRunning === null) {
    await db.deleteFrom('user_caps').where('user_id', '=', i.userId).execute();
    return;
  }
  await db
    .insertInto('user_caps')
    .values({ user_id: i.userId, max_running: i.maxRunning, updated_at: i.now })
    .onConflict((oc) =>
      oc.column('user_id').doUpdateSet({ max_running: i.maxRunning ?? 0, updated_at: i.now }),
    )
    .execute();
}

/** Every override, or those of the given users, as userId -> maxRunning. */
export async function getUserCaps(
  db: Db,
  userIds?: readonly string[],
): Promise<Map<string, number>> {
  let query = db.selectFrom('user_caps').select(['user_id', 'max_running']);
  if (userIds !== undefined) {
    const ids = userIds.map((u, n) => parseOrThrow(f.name, u, `userIds.${n}`));
    if (ids.length === 0) return new Map();
    query = query.where('user_id', 'in', ids);
  }
  const rows = await query.execute();
  return new Map(
    rows.map((r) => {
      if (!Number.isInteger(r.max_running) || r.max_running < 0) {
        throw new CorruptRowError('user_caps', r.user_id, 'max_running');
      }
      return [r.user_id, r.max_running];
    }),
  );
}
