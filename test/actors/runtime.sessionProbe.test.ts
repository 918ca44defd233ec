import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { createRuntime } from '../../src/actors/runtime.js';
import type { Runtime, RuntimeOptions } from '../../src/actors/runtimeTypes.js';
import { SimulatedCluster } from '../../src/containers/simulated/SimulatedCluster.js';
import { connect, type DbHandle } from '../../src/db/connect.js';
import { PooledSessionError } from '../../src/db/errors.js';
import { migrate } from '../../src/db/migrations.js';
import { systemClock } from '../../src/supervisor/clock.js';
import { withDatabase } from '../support/databases.js';
import {
  describeWithPgbouncer,
  PERMISSIVE_POOLER,
  pooledDatabase,
} from '../support/privatePgbouncer.js';
import { TENTH_TIMERS } from '../support/scaledTimers.js';
import {
  describeServer,
  serverDatabase,
  simulatedNodeOptions,
  until,
} from '../support/serverSuite.js';

const beatRows = async (h: DbHandle, nodeId: string) =>
  h.db.selectFrom('node_heartbeats').select('owner').where('node_id', '=', nodeId).execute();

describeServer('createRuntime and the session probe [postgres server]', () => {
  const server = serverDatabase();
  const handles: DbHandle[] = [];
  const nodes: Runtime[] = [];
  afterEach(async () => {
    for (const n of nodes.splice(0)) await n.stop();
    for (const h of handles.splice(0)) await h.close();
  });
  const open = async () => {
    const h = await connect({ databaseUrl: server.url, poolMax: 4 });
    handles.push(h);
    return h;
  };
  /** The handle's two session ports, each step they take written to `calls`. */
  const recorded = (h: DbHandle, probe: () => Promise<void>, calls: string[]) => ({
    bootLock: {
      holdBootLock:
        h.holdBootLock &&
        ((owner: string, onState: Parameters<NonNullable<DbHandle['holdBootLock']>>[1]) => {
          calls.push('lock');
          return h.holdBootLock?.(owner, onState) ?? Promise.reject(new Error('no lock'));
        }),
      holdLeaderLock: h.holdLeaderLock,
      probeSession: probe,
    },
    notifications: {
      listen: (...a: Parameters<DbHandle['listen']>) => {
        calls.push('listen');
        return h.listen(...a);
      },
      probeSession: probe,
    },
  });
  const options = (h: DbHandle, nodeId: string): RuntimeOptions =>
    simulatedNodeOptions(
      h,
      new SimulatedCluster({ clock: systemClock, nodes: ['m1'] }),
      nodeId,
      () => {},
    );

  it('probes once, before anything listens or takes a lock, and boots on a session', async () => {
    const h = await open();
    const calls: string[] = [];
    const probe = async () => {
      calls.push('probe');
      await h.probeSession?.();
    };
    const rt = await createRuntime({ ...options(h, 'probed'), ...recorded(h, probe, calls) });
    nodes.push(rt);
    await rt.booted;
    expect(calls[0]).toBe('probe');
    expect(calls.filter((c) => c === 'probe')).toHaveLength(1);
    expect(calls).toContain('lock');
    expect(calls).toContain('listen');
    expect(rt.health().notifications).toBe('listening');
  });

  it('a probe that fails stops the boot before any lock, LISTEN or heartbeat row', async () => {
    const h = await open();
    const calls: string[] = [];
    const refusal = new PooledSessionError(5_000, 20);
    const probe = async () => {
      calls.push('probe');
      throw refusal;
    };
    await expect(
      createRuntime({ ...options(h, 'refused'), ...recorded(h, probe, calls) }),
    ).rejects.toBe(refusal);
    expect(calls).toEqual(['probe']);
    expect(await beatRows(h, 'refused')).toEqual([]);
  });
});

describeWithPgbouncer(
  'createRuntime behind a pooler that accepts the startup settings [private pgbouncer]',
  (getPooler, server) => {
    const store = pooledDatabase(getPooler, server, 'roundtable_probe_rt');
    let direct: DbHandle;
    beforeAll(async () => {
      direct = await connect({ databaseUrl: withDatabase(server, store.name) });
      await migrate(direct.db);
    });
    afterAll(async () => {
      await direct?.close();
    });
    const open = (pooler: 'none' | 'transaction') => store.open({ pooler, timers: TENTH_TIMERS });
    const cluster = () => new SimulatedCluster({ clock: systemClock, nodes: ['m1'] });

    it('refuses to boot, saying what to do, and leaves no row and no lock behind', async () => {
      const h = await open('none');
      const error = await createRuntime(
        simulatedNodeOptions(h, cluster(), 'fooled', () => {}),
      ).then(
        async (rt) => {
          await rt.stop();
          return null;
        },
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(PooledSessionError);
      expect((error as PooledSessionError).message).toContain(
        "connect with { pooler: 'transaction' }",
      );
      expect(await beatRows(direct, 'fooled')).toEqual([]);
      // pg_locks is the server's: the suites running beside this one hold
      // advisory locks in their own databases, which are none of this test's.
      const { rows: locks } = await sql<{ locktype: string }>`
        SELECT locktype FROM pg_locks WHERE locktype = 'advisory'
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`.execute(
        direct.db,
      );
      expect(locks).toEqual([]);
    });

    it('the control: declared as a transaction pooler, the same node boots and runs a task', async () => {
      const h = await open('transaction');
      const errors: unknown[] = [];
      // As the CLI runs it with --pooler transaction: no LISTEN, the feed polls.
      const { notifications: _, ...polled } = simulatedNodeOptions(h, cluster(), 'declared', (e) =>
        errors.push(e),
      );
      const rt = await createRuntime(polled);
      try {
        await rt.booted;
        await rt.submit('u1', { title: 't', image: 'sim', command: ['sleep', '0'] });
        await until(async () => {
          const rows = await direct.db.selectFrom('sessions').select('status').execute();
          return rows.length === 1 && rows[0]?.status === 'succeeded';
        }, 'the task to succeed through the pooler');
        expect(errors).toEqual([]);
      } finally {
        await rt.stop();
      }
    });
  },
  PERMISSIVE_POOLER,
);
