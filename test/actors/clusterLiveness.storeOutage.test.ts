/**
 * An outage of the whole store (every connection of the database ended, no
 * new ones for a while: a Postgres restart, a failover, a network cut in
 * front of it) longer than the heartbeat window: the server dropped every
 * boot's lock at once and nobody could beat. When it answers again, the
 * first node back must not take the others, alive and reconnecting, for
 * dead (`lock_released`, `beat_stale`) and take their runs: before, every
 * node logged every other one gone, and the Reconciler's leader adopted a
 * live node's runs (its runners fenced out) or failed and re-queued a run
 * it had just been granted ("owner_lost: its run never began").
 */
import { afterEach, expect, it } from 'vitest';
import { OwnerDownNotice } from '../../src/actors/clusterLivenessWiring.js';
import { SimulatedCluster } from '../../src/containers/simulated/SimulatedCluster.js';
import { systemClock } from '../../src/supervisor/clock.js';
import { admin, TEST_DATABASE_URL_VAR, truncateAll } from '../support/databases.js';
import {
  describeServer,
  ServerNodes,
  serverDatabase,
  submitTo,
  until,
} from '../support/serverSuite.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describeServer('cluster liveness through an outage of the store [postgres server]', () => {
  const server = serverDatabase();
  const fleet = new ServerNodes(server);
  afterEach(async () => {
    fleet.kill();
    await fleet.close();
    await truncateAll(server.main.db);
  });

  const running = async () =>
    server.main.db
      .selectFrom('sessions')
      .select(['id', 'owner_node', 'epoch'])
      .where('status', '=', 'running')
      .orderBy('id')
      .execute();

  it('no node takes another for dead when the store comes back, and no run changes hands', async () => {
    const cluster = new SimulatedCluster({ clock: systemClock, nodes: ['m1'] });
    // A 3 s window: the outage below is longer.
    const beats = { heartbeatMs: 1_000, heartbeatStaleBeats: 3 };
    const a = await fleet.boot('nodeA', cluster, beats);
    const b = await fleet.boot('nodeB', cluster, beats);
    await submitTo(a, 2, 60);
    await submitTo(b, 2, 60);
    await until(async () => (await running()).length === 4, 'four runs');
    const before = await running();
    expect(new Set(before.map((s) => s.owner_node))).toEqual(new Set([a.owner, b.owner]));

    const adminUrl = process.env[TEST_DATABASE_URL_VAR] ?? '';
    const dbName = new URL(server.url).pathname.slice(1);
    await admin(adminUrl, `ALTER DATABASE ${dbName} ALLOW_CONNECTIONS false`);
    await admin(
      adminUrl,
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${dbName}'`,
    );
    await sleep(5_000);
    await admin(adminUrl, `ALTER DATABASE ${dbName} ALLOW_CONNECTIONS true`);
    await until(
      () => a.health().lock === 'held' && b.health().lock === 'held',
      'both locks held again',
      20_000,
    );
    // Two windows and more after both are back.
    await sleep(7_000);

    const downs = fleet.errors.filter((e): e is OwnerDownNotice => e instanceof OwnerDownNotice);
    expect(downs.map((d) => `${d.owner} ${d.reason}`)).toEqual([]);
    expect(await running()).toEqual(before);
  }, 60_000);
});
