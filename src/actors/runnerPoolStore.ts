/**
 * The pool's `PoolStore` over the database: the queued and running rows it
 * indexes, and the `user_caps` overrides. Reads only the three columns the
 * index needs, so a boot over 100,000 rows stays cheap.
 */
import { type Db, getUserCaps, setUserCap } from '../db/index.js';
import type { PoolRow } from '../machines/poolIndex.js';
import type { PoolRows, PoolStore } from './runnerPool.js';

const ms = (d: Date | string | null): number => (d === null ? 0 : new Date(d).getTime());

/** A store reading `sessions` and `user_caps` through the db layer's connection. */
export function dbPoolStore(db: Db): PoolStore {
  return {
    async loadRows(): Promise<PoolRows> {
      // One statement: queued and running rows as of one snapshot.
      const rows = await db
        .selectFrom('sessions')
        .select(['id', 'user_id', 'status', 'enqueued_at', 'claimed_at'])
        .where('status', 'in', ['queued', 'running'])
        .execute();
      const queued: PoolRow[] = [];
      const running: PoolRow[] = [];
      for (const r of rows) {
        if (r.status === 'queued') {
          queued.push({ sessionId: r.id, userId: r.user_id, since: ms(r.enqueued_at) });
        } else {
          running.push({ sessionId: r.id, userId: r.user_id, since: ms(r.claimed_at) });
        }
      }
      return { queued, running };
    },
    loadCaps: () => getUserCaps(db),
    saveCap: (userId, max, at) => setUserCap(db, { userId, maxRunning: max, now: new Date(at) }),
  };
}
