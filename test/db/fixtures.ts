/** Small builders shared by the store's suites. */

import { createTaskWithSession } from '../../src/db/tasks.js';
import type { Db } from '../../src/db/transaction.js';

export const SPEC = { image: 'busybox:1.36', command: ['sh', '-c', 'echo "$1"', 'x'] } as const;

/** A manual clock: each call is one second after the previous. */
export function steppingClock(start = Date.parse('2026-07-14T10:00:00Z')): () => Date {
  let t = start;
  return () => {
    t += 1000;
    return new Date(t);
  };
}

/** Creates a task with its queued session for `userId`. */
export async function enqueue(db: Db, userId: string, now: Date, title = 'a task') {
  return createTaskWithSession(db, { userId, title, spec: SPEC, now });
}

/** How many rows each table holds. */
export async function rowCounts(db: Db): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of ['tasks', 'sessions', 'session_events', 'user_caps'] as const) {
    const row = await db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    out[table] = Number(row.n);
  }
  return out;
}
