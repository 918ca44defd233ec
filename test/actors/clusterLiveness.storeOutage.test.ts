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

  /** Two nodes on a 1.2 s heartbeat window, each running two long runs. */
  const twoNodesRunning = async () => {
    const cluster = new SimulatedCluster({ clock: systemClock, nodes: ['m1'] });
    const beats = { heartbeatMs: 400, heartbeatStaleBeats: 3 };
    const a = await fleet.boot('nodeA', cluster, beats);
    const b = await fleet.boot('nodeB', cluster, beats);
    await submitTo(a, 2, 60);
    await submitTo(b, 2, 60);
    await until(async () => (await running()).length === 4, 'four runs');
    return { a, b };
  };

  /** Ends every connection of the suite's database and refuses new ones until `up()`. */
  const storeDown = async () => {
    const adminUrl = process.env[TEST_DATABASE_URL_VAR] ?? '';
    const dbName = new URL(server.url).pathname.slice(1);
    await admin(adminUrl, `ALTER DATABASE ${dbName} ALLOW_CONNECTIONS false`);
    await admin(
      adminUrl,
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${dbName}'`,
    );
    return { up: () => admin(adminUrl, `ALTER DATABASE ${dbName} ALLOW_CONNECTIONS true`) };
  };

  it('no node takes another for dead when the store comes back, and no run changes hands', async () => {
    const { a, b } = await twoNodesRunning();
    const before = await running();
    expect(new Set(before.map((s) => s.owner_node))).toEqual(new Set([a.owner, b.owner]));

    const store = await storeDown();
    await sleep(2_500);
    await store.up();
    await until(
      () => a.health().lock === 'held' && b.health().lock === 'held',
      'both locks held again',
      20_000,
    );
    // Two windows and more after both are back, past the locks' grace too.
    await sleep(3_000);

    const downs = fleet.errors.filter((e): e is OwnerDownNotice => e instanceof OwnerDownNotice);
    expect(downs.map((d) => `${d.owner} ${d.reason}`)).toEqual([]);
    expect(await running()).toEqual(before);
  }, 45_000);

  it('a node that died during the outage is still found once the store is back, and its runs taken', async () => {
    const { a, b } = await twoNodesRunning();

    const store = await storeDown();
    b.kill();
    await sleep(2_500);
    await store.up();
    // B never comes back: past the locks' grace A finds it gone and takes its runs.
    await until(
      async () => (await running()).every((s) => s.owner_node === a.owner),
      "B's runs taken by A",
      20_000,
    );
    const downs = fleet.errors.filter((e): e is OwnerDownNotice => e instanceof OwnerDownNotice);
    expect(downs.map((d) => d.owner)).toContain(b.owner);
  }, 45_000);
});
