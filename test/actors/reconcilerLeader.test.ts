/**
 * The Reconciler's leader on the Postgres server: three runtimes with their
 * own pools, boot locks and leader locks on one database (as three machines
 * would have), on real time. One leads; when it is killed a follower leads
 * at once and acts on the dead leader's runs; a leader cut off and resumed
 * late writes nothing (its pass is aborted, its writes carry the epoch it
 * read, which the new leader moved on); a leader wedged with its sessions
 * open is deposed once the liveness decision calls it dead.
 */
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import * as leader from '../../src/actors/reconcilerLeader.js';
import { leaderKeyOf, leaderName } from '../../src/actors/reconcilerLeader.js';
import type { Runtime, RuntimeOptions } from '../../src/actors/runtimeTypes.js';
import { SimulatedBackend } from '../../src/containers/simulated/SimulatedBackend.js';
import { SimulatedCluster } from '../../src/containers/simulated/SimulatedCluster.js';
import { bootLockKey, leaderBackend } from '../../src/db/index.js';
import { systemClock } from '../../src/supervisor/clock.js';
import { truncateAll } from '../support/databases.js';
import { runDocExamples } from '../support/docExamples.js';
import { type FreezableProxy, startFreezableProxy } from '../support/freezableProxy.js';
import {
  describeServer,
  ServerNodes,
  serverDatabase,
  submitTo,
  until,
} from '../support/serverSuite.js';

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

runDocExamples(new URL('../../src/actors/reconcilerLeader.ts', import.meta.url), leader);

describe('leaderKeyOf', () => {
  it('reads back the key leaderName wrote', () => {
    expect(leaderKeyOf(leaderName('a@b1'))).toBe(bootLockKey('a@b1'));
    expect(leaderName('a@b1').length).toBeLessThanOrEqual(63);
  });
});

describeServer('the Reconciler leader [postgres server]', () => {
  const server = serverDatabase();
  const fleet = new ServerNodes(server);
  const errors = fleet.errors;
  const proxies: FreezableProxy[] = [];
  const gates: Array<() => void> = [];
  afterEach(async () => {
    for (const open of gates.splice(0)) open();
    fleet.kill();
    for (const p of proxies.splice(0)) await p.close();
    await fleet.close();
    // Sessions a frozen proxy left on the server.
    await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid()
        AND application_name LIKE 'roundtable-%'`.execute(server.main.db);
    await truncateAll(server.main.db);
  });

  const boot = (
    nodeId: string,
    cluster: SimulatedCluster,
    extra: Partial<RuntimeOptions> & { databaseUrl?: string } = {},
  ) => fleet.boot(nodeId, cluster, extra);
  const rows = () =>
    server.main.db
      .selectFrom('sessions')
      .select(['id', 'status', 'owner_node', 'epoch', 'attempt', 'failure_reason'])
      .orderBy('id')
      .execute();
  const leaders = (of: Runtime[]) => of.filter((n) => n.health().reconciler === 'leader');
  /** Errors that are not the expected notices of a death or a lost lock. */
  const faults = () =>
    errors.filter(
      (e) =>
        !['OWNER_DOWN', 'LEADERSHIP_LOST', 'BOOT_LOCK_LOST'].includes(
          (e as { code?: string }).code ?? '',
        ) && !/lost its connection|terminat/i.test(String(e)),
    );

  it('one of three leads; killed, a follower leads at once and adopts its runs, each exec once', async () => {
    const cluster = new SimulatedCluster({ clock: systemClock, nodes: ['m1'] });
    const all = [await boot('nodeA', cluster)];
    all.push(await boot('nodeB', cluster), await boot('nodeC', cluster));
    expect(all.map((n) => n.health().reconciler)).toEqual(['leader', 'follower', 'follower']);
    // A follower's boot is covered by the leader: `booted` settles, having done nothing.
    expect(await all[1]?.booted).toMatchObject({ adopted: [], failed: [] });
    const [a] = all as [Runtime];
    await submitTo(a, 3, 4);
    await until(
      async () => (await rows()).filter((s) => s.status === 'running').length === 3,
      'A to run 3',
    );
    expect((await leaderBackend(server.main.db))?.name).toBe(leaderName(a.owner));
    a.kill();
    const rest = all.slice(1);
    await until(() => leaders(rest).length === 1, 'a follower to lead', 10_000);
    expect(rest.map((n) => n.health().reconciler).sort()).toEqual(['follower', 'leader']);
    await until(
      async () =>
        (await rows()).every((s) => s.status !== 'running' || s.owner_node !== a.owner) &&
        (await rows()).some((s) => s.status === 'running'),
      'the runs adopted',
      10_000,
    );
    await until(async () => (await rows()).every((s) => s.status === 'succeeded'), 'done');
    expect((await rows()).map((s) => s.attempt)).toEqual([1, 1, 1]);
    for (const s of await rows()) expect(cluster.execLog(s.id)).toHaveLength(1);
    expect(faults()).toEqual([]);
  }, 60_000);

  it('an ex-leader cut off mid-pass and resumed late changes no row: the epoch fences it', async () => {
    // X's containers die with it (its own cluster): the only remedy is to fail and re-queue.
    const lost = new SimulatedCluster({ clock: systemClock, nodes: ['x1'] });
    const shared = new SimulatedCluster({ clock: systemClock, nodes: ['m1'] });
    const gated = new SimulatedBackend(shared);
    const gate = deferred();
    gates.push(gate.resolve);
    let held = 0;
    let shut = false;
    const observe = gated.observe.bind(gated);
    gated.observe = async (ref) => {
      if (shut) {
        held += 1;
        await gate.promise;
      }
      return observe(ref);
    };
    // X alone first, so both runs are granted to it; it takes no part in leading.
    const x = await boot('nodeX', lost, { reconcileLock: false });
    await submitTo(x, 2, 30);
    await until(
      async () =>
        (await rows()).filter((s) => s.status === 'running' && s.owner_node === x.owner).length ===
        2,
      'X to run 2',
    );
    const a = await boot('nodeA', shared, { backend: gated });
    const b = await boot('nodeB', shared);
    expect([a, b].map((n) => n.health().reconciler)).toEqual(['leader', 'follower']);
    shut = true;
    x.kill();
    // A's DOWN pass reads X's rows and stops in observe, holding stale epochs.
    await until(() => held === 2, "A's pass to hold both rows");
    await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE application_name = ${leaderName(a.owner)}`.execute(server.main.db);
    await until(() => b.health().reconciler === 'leader', 'B to lead', 10_000);
    await until(
      async () =>
        (await rows()).filter((s) => s.failure_reason === 'owner_lost').length === 2 &&
        (await rows()).filter((s) => s.attempt === 2 && s.status !== 'queued').length === 2,
      'B to fail and re-queue both, and run the new attempts',
      10_000,
    );
    const after = await rows();
    // A resumes: its pass finishes its two rows with the epochs it read.
    gate.resolve();
    await until(() => a.busy() === 0, 'A to settle');
    await new Promise((r) => setTimeout(r, 300));
    const now = await rows();
    expect(now.map((s) => [s.id, s.epoch, s.owner_node, s.attempt])).toEqual(
      after.map((s) => [s.id, s.epoch, s.owner_node, s.attempt]),
    );
    expect(now.filter((s) => s.attempt === 2)).toHaveLength(2);
    expect(a.health().reconciler).not.toBe('leader');
    expect(faults()).toEqual([]);
  }, 60_000);

  it('a leader wedged with its sessions open is deposed once its beats go stale', async () => {
    const cluster = new SimulatedCluster({ clock: systemClock, nodes: ['m1'] });
    const proxy = await startFreezableProxy({ host: '127.0.0.1', port: 5432 });
    proxies.push(proxy);
    const viaProxy = new URL(server.url);
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    const beats = { heartbeatMs: 200, heartbeatStaleBeats: 3 };
    const a = await boot('nodeA', cluster, { ...beats, databaseUrl: viaProxy.toString() });
    const b = await boot('nodeB', cluster, beats);
    expect([a, b].map((n) => n.health().reconciler)).toEqual(['leader', 'follower']);
    // Every connection of A goes silent without a FIN: the server keeps A's locks.
    proxy.freeze();
    await until(() => b.health().reconciler === 'leader', 'B to depose A and lead', 15_000);
    expect((await leaderBackend(server.main.db))?.name).toBe(leaderName(b.owner));
  }, 60_000);
});
