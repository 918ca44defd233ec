/**
 * The store behind a real transaction pooler (a private PgBouncer with
 * stock settings but `pool_mode = transaction`): without `pooler` a stock
 * PgBouncer refuses the node's startup settings; with `pooler:
 * 'transaction'` the handle connects, migrates and ticks through it, asks
 * the server for nothing session-scoped (no startup settings, no LISTEN, no
 * session locks), and keeps its client deadline.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connect, type DbHandle } from '../../src/db/connect.js';
import { ConnectError, NoSessionError } from '../../src/db/errors.js';
import { migrate } from '../../src/db/migrations.js';
import { tick } from '../../src/db/tick.js';
import { DbTimeoutError } from '../../src/db/transientErrors.js';
import { admin } from '../support/databases.js';
import { describeWithPgbouncer } from '../support/privatePgbouncer.js';
import { enqueueOp } from './tickFixtures.js';

describeWithPgbouncer(
  'connect behind a transaction pooler [private pgbouncer]',
  (getPooler, server) => {
    const dbName = `roundtable_pooler_${process.pid}_${randomBytes(4).toString('hex')}`;
    const handles: DbHandle[] = [];
    const open = async (extra: Parameters<typeof connect>[0] = {}) => {
      const h = await connect({
        databaseUrl: getPooler().urlFor(dbName),
        pooler: 'transaction',
        connectTimeoutMs: 2_000,
        ...extra,
      });
      handles.push(h);
      return h;
    };

    beforeAll(async () => {
      await admin(server, `CREATE DATABASE ${dbName}`);
    });
    afterAll(async () => {
      for (const h of handles) await h.close();
      await admin(server, `DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    });

    it('without `pooler`, a stock PgBouncer refuses the session settings a node sends at startup', async () => {
      const error = await connect({
        databaseUrl: getPooler().urlFor(dbName),
        connectTimeoutMs: 2_000,
      }).then(
        (h) => {
          handles.push(h);
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
