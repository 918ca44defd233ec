/**
 * A node's dedicated connections (the listener's, the boot lock's, the
 * leader lock's) are checked each time they connect again, not only at
 * boot: after a cut, the node's address may lead to a transaction pooler
 * that accepts its startup settings (a DNS switch). Through such a pooler a
 * LISTEN hears nothing and a session lock outlives the node that took it;
 * checked, they stay lost (the feed polls, the node takes no grants), say
 * why once, and come back when the address leads to a session again.
 *
 * The "DNS switch" is a TCP proxy in front of the test server that is
 * retargeted at a private PgBouncer (transaction mode, the node's startup
 * settings accepted and dropped), then every connection through it cut.
 */
import { sql } from 'kysely';
import pg from 'pg';
import { expect, it, vi } from 'vitest';
import { type BootLockState, bootLockKey, heldBootKeys } from '../../src/db/bootLock.js';
import { connect } from '../../src/db/connect.js';
import { PooledSessionError } from '../../src/db/errors.js';
import { type LeaderState, leaderBackend } from '../../src/db/leaderLock.js';
import type { ListenState } from '../../src/db/listen.js';
import { migrate } from '../../src/db/migrations.js';
import { startFreezableProxy } from '../support/freezableProxy.js';
import {
  describeWithPgbouncer,
  PERMISSIVE_POOLER,
  pooledDatabase,
} from '../support/privatePgbouncer.js';
import { TENTH_TIMERS } from '../support/scaledTimers.js';

const CHANNEL = 'rt_reconnect_check';

describeWithPgbouncer(
  'dedicated connections checked again when they reconnect [private pgbouncer]',
  (getPooler, server) => {
    // Only for its database's life cycle: the node reaches it through the proxy.
    const store = pooledDatabase(getPooler, server, 'roundtable_recheck');
    const direct = () => {
      const u = new URL(server);
      u.pathname = `/${store.name}`;
      return u;
    };

    it('stay lost behind the pooler, say so once each, and come back on a session', async () => {
      const serverUrl = direct();
      const proxy = await startFreezableProxy({
        host: serverUrl.hostname,
        port: Number(serverUrl.port || 5432),
      });
      const viaProxy = new URL(serverUrl);
      viaProxy.host = `127.0.0.1:${proxy.port}`;
      const errors: Error[] = [];
      const h = await connect({
        databaseUrl: viaProxy.toString(),
        connectTimeoutMs: 2_000,
        timers: TENTH_TIMERS,
        listenRetryMinMs: 500,
        listenRetryMaxMs: 2_000,
        onPoolError: (e) => errors.push(e),
      });
      const watcher = new pg.Client({ connectionString: serverUrl.toString() });
      await watcher.connect();
      const unlisten: Array<() => Promise<void>> = [];
      try {
        await migrate(h.db);
        const heard: string[] = [];
        const states = { listen: [] as ListenState[], boot: [] as BootLockState[] };
        const leader: LeaderState[] = [];
        unlisten.push(
          await h.listen(
            CHANNEL,
            (p) => heard.push(p),
            (s) => states.listen.push(s),
          ),
        );
        const owner = `recheck@${process.pid}`;
        const boot = await h.holdBootLock?.(owner, (s) => states.boot.push(s));
        const lead = await h.holdLeaderLock?.('rt-recheck-leader', (s) => leader.push(s));
        if (boot === undefined || lead === undefined) throw new Error('no session locks');
        unlisten.push(
          () => boot.release(),
          () => lead.release(),
        );
        expect(states.listen.at(-1)).toBe('listening');
        expect(boot.state()).toBe('held');
        expect(leader.at(-1)).toBe('leader');

        // The address now leads to the pooler; every connection is cut.
        const pooler = new URL(getPooler().urlFor(store.name));
        proxy.retarget({ host: pooler.hostname, port: Number(pooler.port) });
        proxy.cut();
        await vi.waitFor(
          () => {
            expect(errors.filter((e) => e instanceof PooledSessionError)).toHaveLength(3);
          },
          { timeout: 15_000, interval: 50 },
        );
        // Retried meanwhile (each try a 0.5 s check), said once each, held nowhere.
        await new Promise((r) => setTimeout(r, 2_500));
        expect(errors.filter((e) => e instanceof PooledSessionError)).toHaveLength(3);
        expect(states.listen.at(-1)).toBe('lost');
        expect(boot.state()).toBe('lost');
        expect(leader.at(-1)).toBe('lost');
        // Neither lock is held on any server connection (the pooler's included).
        expect((await heldBootKeys(h.db)).has(bootLockKey(owner))).toBe(false);
        expect(await leaderBackend(h.db)).toBeNull();
        // The address leads to the server again: each reconnects, checked, and works.
        proxy.retarget({ host: serverUrl.hostname, port: Number(serverUrl.port || 5432) });
        proxy.cut();
        await vi.waitFor(
          () => {
            expect(states.listen.at(-1)).toBe('listening');
            expect(boot.state()).toBe('held');
            expect(leader.at(-1)).toBe('leader');
          },
          { timeout: 15_000, interval: 50 },
        );
        await watcher.query(`NOTIFY ${CHANNEL}, 'back'`);
        await vi.waitFor(() => expect(heard).toContain('back'), { timeout: 5_000 });
        expect((await heldBootKeys(h.db)).has(bootLockKey(owner))).toBe(true);
        await sql`SELECT 1`.execute(h.db);
      } finally {
        for (const u of unlisten.reverse()) await u().catch(() => {});
        await watcher.end().catch(() => {});
        await h.close();
        await proxy.close();
      }
    }, 60_000);
  },
  PERMISSIVE_POOLER,
);
