/**
 * The pool's `PoolStore` over the database: the queued and running rows it
 * indexes, and the `user_caps` overrides. Reads only the three columns the
 * index needs, so a boot over 100,000 rows stays cheap.
 */
import { sql } from 'kysely';
import { type Db, getUserCaps, setUserCap } from '../db/index.js';
import type { PoolRow } from '../machines/poolIndex.js';
import type { PoolRows, PoolStore } from './runnerPool.js';

/** A store reading `sessions` and `user_caps` through the db layer's connection. */
export function dbPoolStore(db: Db): PoolStore {
  return {
    async loadRows(): Promise<PoolRows> {
      // One statement: queued and running rows as of one snapshot. The
      // timestamps come back as float8 milliseconds: parsing 100,000 Dates
      // costs more than the query.
      const rows = await db
        .selectFrom('sessions')
        .select([
          'id',
          'user_id',
          'status',
          sql<number>`(extract(epoch from case when status = 'running'
            then coalesce(claimed_at, enqueued_at) else enqueued_at end) * 1000)::float8`.as(
            'since',
          ),
        ])
        .where('status', 'in', ['queued', 'running'])
        .execute();
      const queued: PoolRow[] = [];
      const running: PoolRow[] = [];
      for (const r of rows) {
        const row = { sessionId: r.id, userId: r.user_id, since: Number(r.since) };
        if (r.status === 'queued') queued.push(row);
        else running.push(row);
      }
      return { queued, running };
    },
    loadCaps: () => getUserCaps(db),
    saveCap: (userId, max, at) => setUserCap(db, { userId, maxRunning: max, now: new Date(at) }),
  };
}
