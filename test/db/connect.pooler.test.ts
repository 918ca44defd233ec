import { sql } from 'kysely';
import { expect, it } from 'vitest';
import type { connect } from '../../src/db/connect.js';
import { ConnectError, NoSessionError } from '../../src/db/errors.js';
import { migrate } from '../../src/db/migrations.js';
import { tick } from '../../src/db/tick.js';
import { DbTimeoutError } from '../../src/db/transientErrors.js';
import { describeWithPgbouncer, pooledDatabase } from '../support/privatePgbouncer.js';
import { enqueueOp } from './tickFixtures.js';

describeWithPgbouncer(
  'connect behind a transaction pooler [private pgbouncer]',
  (getPooler, server) => {
    const store = pooledDatabase(getPooler, server, 'roundtable_pooler');
    const open = (extra: Parameters<typeof connect>[0] = {}) =>
      store.open({ pooler: 'transaction', ...extra });

    it('without `pooler`, a stock PgBouncer refuses the session settings a node sends at startup', async () => {
      const error = await store.open().then(
        () => {
          throw new Error('expected the pooler to refuse the connection');
        },
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ConnectError);
      expect(String((error as ConnectError).cause)).toMatch(
        /unsupported startup parameter: statement_timeout/,
      );
      // A library user is told what to do, as the CLI's --pooler hint does.
      expect((error as ConnectError).message).toBe(
        "cannot reach the postgres store: unsupported startup parameter: statement_timeout: behind a transaction pooler (PgBouncer in transaction mode), connect with { pooler: 'transaction' } (docs/operations.md)",
      );
      expect((error as ConnectError).summary).toBe('cannot reach the postgres store');
    });

    it('connects, migrates and ticks through it, with the role’s settings and no session locks', async () => {
      const h = await open();
      await migrate(h.db);
      const { rows } = await sql<{
        s: string;
      }>`SELECT current_setting('statement_timeout') AS s`.execute(h.db);
      // Nothing sent: the server's (the role's) setting, not the node's 15 s.
      expect(rows[0]?.s).toBe('0');
      expect(h.pooler).toBe('transaction');
      expect(h.holdBootLock).toBeNull();
      expect(h.holdLeaderLock).toBeNull();
      // The tick's lock is a transaction's: it works behind the pooler.
      const now = new Date();
      const op = enqueueOp('ann', 'through the pooler');
      const r = await tick(h.db, {
        owner: 'pooled@b1',
        now,
        globalCap: 1,
        defaultUserCap: 1,
        want: 1,
        ops: [op],
      });
      expect(r.outcomes[0]).toMatchObject({ kind: 'applied' });
      expect(r.granted.map((g) => g.session.id)).toEqual([op.sessionId]);
    });

    it('refuses LISTEN with NoSessionError: it would stay on a pooled server connection', async () => {
      const h = await open();
      const error = await h
        .listen('roundtable_tick', () => undefined)
        .then(
          () => {
            throw new Error('expected listen to reject');
          },
          (e: unknown) => e,
        );
      expect(error).toBeInstanceOf(NoSessionError);
      expect((error as NoSessionError).code).toBe('DB_NO_SESSION');
    });

    it('keeps the client deadline: a statement past it rejects as DbTimeoutError', async () => {
      const h = await open({ queryTimeoutMs: 300 });
      const error = await sql`SELECT pg_sleep(2)`.execute(h.db).then(
        () => {
          throw new Error('expected the deadline to fire');
        },
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(DbTimeoutError);
      expect((error as DbTimeoutError).kind).toBe('client');
    });
  },
);
