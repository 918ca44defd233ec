/**
 * Cluster liveness between two runtimes on the Postgres server (each with
 * its own pool and boot lock, one simulated cluster on real time, as two
 * machines running the same Swarm would have): a death is a DOWN from the
 * boot lock, long before the heartbeat window (60 s by default) could say
 * so; a lock connection cut without a FIN leaves the decision to the
 * heartbeat backstop; a boot whose own lock hangs takes no grants. In every
 * case each run's exec happened once, and each run was adopted at most once.
 */
import { sql } from 'kysely';
import { afterEach, expect, it } from 'vitest';
import { BootLockLostError, OwnerDownNotice } from '../../src/actors/clusterLivenessWiring.js';
import { createRuntime } from '../../src/actors/runtime.js';
import type { RuntimeOptions } from '../../src/actors/runtimeTypes.js';
import { SimulatedCluster } from '../../src/containers/simulated/SimulatedCluster.js';
import { REAL_TIMERS } from '../../src/db/dedicatedClient.js';
import { bootLockKey, heldBootKeys, holdBootLock } from '../../src/db/index.js';
import { systemClock } from '../../src/supervisor/clock.js';
import { describeEachEngine, truncateAll } from '../support/databases.js';
import { type FreezableProxy, startFreezableProxy } from '../support/freezableProxy.js';
import {
  describeServer,
  ServerNodes,
  serverDatabase,
  simulatedNodeOptions,
  submitTo,
  until,
} from '../support/serverSuite.js';

describeServer('cluster liveness: two runtimes [postgres server]', () => {
  const server = serverDatabase();
  const fleet = new ServerNodes(server);
  const notices = fleet.errors;
  const proxies: FreezableProxy[] = [];
  let cluster: SimulatedCluster;
  afterEach(async () => {
    fleet.kill();
    for (const p of proxies.splice(0)) await p.close();
    await fleet.close();
    await truncateAll(server.main.db);
  });

  const boot = (nodeId: string, extra: Partial<RuntimeOptions> = {}) =>
    fleet.boot(nodeId, cluster, extra);
  const running = async () =>
    server.main.db
      .selectFrom('sessions')
      .select(['id', 'owner_node', 'epoch', 'attempt'])
      .where('status', '=', 'running')
      .execute();
  const sessions = async () =>
    server.main.db
      .selectFrom('sessions')
      .select(['id', 'status', 'owner_node', 'attempt'])
      .execute();
  const downs = () => notices.filter((n): n is OwnerDownNotice => n instanceof OwnerDownNotice);
  /** A node that takes its boot lock again only 1.5 s after losing it: long enough for the others to see it gone. */
  const bootRelockingSlowly = (nodeId: string, extra: Partial<RuntimeOptions> = {}) =>
    boot(nodeId, {
      ...extra,
      bootLock: {
        holdBootLock: (owner, onState) =>
          holdBootLock({
            client: { connectionString: server.url, query_timeout: 2_000 },
            owner,
            pingMs: 200,
            retryMinMs: 1_500,
            retryMaxMs: 1_500,
            closeTimeoutMs: 500,
            timers: REAL_TIMERS,
            onState,
            onError: () => undefined,
          }),
      },
    });
  /** Ends the connection holding `owner`'s boot lock, as a network blip would. */
  const endBootLock = (owner: string) =>
    sql`SELECT pg_terminate_backend(l.pid) FROM pg_locks l
      WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
        AND l.objid = ${bootLockKey(owner)}::oid
        AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`.execute(
      server.main.db,
    );
  /** Every exec of every session happened once. */
  const eachExecOnce = async () => {
    for (const s of await sessions()) expect(cluster.execLog(s.id).length).toBeLessThanOrEqual(1);
  };

  it('a killed node is a DOWN from its lock: another node adopts its runs at once, each exec once', async () => {
    cluster = new SimulatedCluster({ clock: systemClock, nodes: ['m1'] });
    const a = await boot('nodeA');
    await submitTo(a, 3, 3);
    await until(async () => (await running()).length === 3, 'A to run 3');
    const b = await boot('nodeB');
    expect(a.health().lock).toBe('held');
    expect(b.health().lock).toBe('held');
    a.kill();
    // A's last beat vouches for it for 60 s: only the lock can say it died.
    await until(
      async () => (await running()).every((s) => s.owner_node === b.owner),
      'B to adopt',
      10_000,
    );
    // B may adopt before its watch says DOWN: A led, and B's takeover pass runs at once.
    await until(() => downs().length > 0, "B's watch to report the DOWN", 10_000);
    expect(downs().map((d) => [d.owner, d.reason])).toEqual([[a.owner, 'lock_released']]);
    // /metrics of B counts it.
    expect(b.metrics().ownerDownsTotal).toEqual({ lock_released: 1 });
    await until(
      async () => (await sessions()).every((s) => s.status === 'succeeded'),
      'the adopted runs to finish from their markers',
    );
    expect((await sessions()).map((s) => s.attempt)).toEqual([1, 1, 1]);
    await eachExecOnce();
  });

  it('a later boot of this very node takes the earlier one over; the earlier one never takes the later one for dead', async () => {
    // A start-first deploy with a fixed --node-id (or two machines given the
    // same one): both boots live at once, each with its lock held.
    cluster = new SimulatedCluster({ clock: systemClock, nodes: ['m1'] });
    const earlier = await boot('nodeA');
    await submitTo(earlier, 2, 30);
    await until(async () => (await running()).length === 2, 'the earlier boot to run 2');
    const later = await boot('nodeA');
    await until(
      async () => (await running()).every((s) => s.owner_node === later.owner),
      'the later boot to take the runs over',
      10_000,
    );
    // Both live for a while: the earlier boot's watch (every second) must not
    // find the later one dead and take the runs back.
    await new Promise((r) => setTimeout(r, 4_000));
    expect(downs().filter((d) => d.owner === later.owner)).toEqual([]);
    const now = await running();
    expect(now).toHaveLength(2);
    expect(now.every((s) => s.owner_node === later.owner)).toBe(true);
    await eachExecOnce();
  }, 30_000);

  it('a stopped node (SIGTERM) is a DOWN too: its row goes, then its lock', async () => {
    cluster = new SimulatedCluster({ clock: systemClock, nodes: ['m1'] });
    const a = await boot('nodeA');
    await submitTo(a, 2, 3);
    await until(async () => (await running()).length === 2, 'A to run 2');
    const b = await boot('nodeB');
    await a.stop();
    await until(
      async () => (await running()).every((s) => s.owner_node === b.owner),
      'B to adopt',
      10_000,
    );
    // Never more than one DOWN per boot (the watch may not get to report it
    // at all when B's own pass already handed the runs over).
    expect(downs().filter((d) => d.owner === a.owner).length).toBeLessThanOrEqual(1);
    await until(async () => (await sessions()).every((s) => s.status === 'succeeded'), 'done');
    await eachExecOnce();
  });

  it('a node killed while no other node watched: the next boot reads from its row that it held a lock, and takes its runs at once', async () => {
    cluster = new SimulatedCluster({ clock: systemClock, nodes: ['m1'] });
    const a = await boot('nodeA');
    await submitTo(a, 2, 3);
    // Killed once both commands began, whether or not the tick carrying
    // their handles has committed: a run killed in between is found by its
    // name and adopted, not re-queued to run twice (it was, until
    // unrecordedRun.ts: CI saw the second run's handle not yet written).
    await until(
      async () => (await running()).length === 2 && cluster.execLog().length === 2,
      'A to start 2',
    );
    await until(
      async () =>
        (await server.main.db.selectFrom('node_heartbeats').select('boot_lock').execute()).some(
          (r) => r.boot_lock,
        ),
      "A's beat saying it holds its lock",
    );
    a.kill();
    // B never saw A's lock held; A's last beat would vouch for it for 60 s.
    const b = await boot('nodeB');
    await until(
      async () => (await running()).every((s) => s.owner_node === b.owner),
      'B to adopt',
      10_000,
    );
    await until(async () => (await sessions()).every((s) => s.status === 'succeeded'), 'done');
    expect((await sessions()).map((s) => s.attempt)).toEqual([1, 1]);
    await eachExecOnce();
  });

  it('a boot that takes no lock (behind a pooler) is judged by its beats alone: its runs are left alone', async () => {
    cluster = new SimulatedCluster({ clock: systemClock, nodes: ['m1'] });
    const a = await boot('nodeA', { bootLock: undefined });
    await submitTo(a, 1, 2);
    await until(async () => (await running()).length === 1, 'A to run 1');
    const b = await boot('nodeB');
    await b.reconcile();
    expect((await running()).map((s) => s.owner_node)).toEqual([a.owner]);
    await until(async () => (await sessions()).every((s) => s.status === 'succeeded'), 'done');
    expect(downs().filter((d) => d.owner === a.owner)).toEqual([]);
    await eachExecOnce();
  });

  it('a lock connection cut without a FIN: the server keeps the lock, the heartbeat backstop decides, one adoption', async () => {
    cluster = new SimulatedCluster({ clock: systemClock, nodes: ['m1'] });
    const proxy = await startFreezableProxy({ host: '127.0.0.1', port: 5432 });
    proxies.push(proxy);
    const viaProxy = new URL(server.url);
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    const beats = { heartbeatMs: 300, heartbeatStaleBeats: 3 };
    const a = await boot('nodeA', {
      ...beats,
      bootLock: {
        holdBootLock: (owner, onState) =>
          holdBootLock({
            client: { connectionString: viaProxy.toString(), query_timeout: 2_000 },
            owner,
            pingMs: 200,
            retryMinMs: 50,
            retryMaxMs: 500,
            closeTimeoutMs: 500,
            timers: REAL_TIMERS,
            onState,
            onError: () => undefined,
          }),
      },
    });
    await submitTo(a, 2, 4);
    await until(async () => (await running()).length === 2, 'A to run 2');
    const b = await boot('nodeB', beats);
    // The cable is cut, then A dies: no FIN ever reaches the server.
    proxy.freeze();
    a.kill();
    await until(
      async () => (await running()).every((s) => s.owner_node === b.owner),
      'B to adopt',
      15_000,
    );
    expect((await heldBootKeys(server.main.db)).has(bootLockKey(a.owner))).toBe(true);
    expect(downs().map((d) => [d.owner, d.reason])).toEqual([[a.owner, 'beat_stale']]);
    const epochs = (await running()).map((s) => s.epoch);
    await until(async () => (await sessions()).every((s) => s.status === 'succeeded'), 'done');
    // Adopted once: the grant's epoch, plus one fence.
    expect(epochs.every((e) => e === epochs[0])).toBe(true);
    await eachExecOnce();
    // The server drops the orphaned session only when we tell it to.
    await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE application_name = 'roundtable-bootlock' AND datname = current_database()
        AND client_port IS NOT NULL`.execute(server.main.db);
  });

  it('runs adopted away while a boot had lost its lock come back to it when their adopter dies: its fenced-out runners are replaced, each exec once', async () => {
    cluster = new SimulatedCluster({ clock: systemClock, nodes: ['m1'] });
    const a = await boot('nodeA');
    const b = await bootRelockingSlowly('nodeB');
    await submitTo(b, 2, 8);
    await until(
      async () => (await running()).filter((s) => s.owner_node === b.owner).length === 2,
      'B to run 2',
    );
    await endBootLock(b.owner);
    await until(
      async () => (await running()).every((s) => s.owner_node === a.owner),
      'A to adopt B runs',
      10_000,
    );
    // B's runners of those runs still live: the fence moved them out, nobody told them.
    await until(() => b.health().lock === 'held', 'B to hold its lock again');
    a.kill();
    await until(
      async () => {
        const rows = await running();
        return rows.length === 2 && rows.every((s) => s.owner_node === b.owner);
      },
      'B to adopt them back',
      10_000,
    );
    // One runner per run on B, each holding its slot at the row's epoch.
    expect(b.health().holding).toBe(2);
    await until(async () => (await sessions()).every((s) => s.status === 'succeeded'), 'done');
    expect((await sessions()).map((s) => s.attempt)).toEqual([1, 1]);
    await eachExecOnce();
  });

  it('a boot whose runs were adopted while it had lost its lock stops its runners of them at its next beat, and gives their slots back', async () => {
    cluster = new SimulatedCluster({ clock: systemClock, nodes: ['m1'] });
    const a = await boot('nodeA');
    const b = await bootRelockingSlowly('nodeB', { heartbeatMs: 300 });
    await submitTo(b, 2, 6);
    await until(
      async () => (await running()).filter((s) => s.owner_node === b.owner).length === 2,
      'B to run 2',
    );
    expect(b.health().holding).toBe(2);
    await endBootLock(b.owner);
    await until(
      async () => (await running()).every((s) => s.owner_node === a.owner),
      'A to adopt B runs',
      10_000,
    );
    await until(() => b.health().holding === 0, "B to stop its runners of A's runs", 10_000);
    const fencedOut = notices.filter((n) => (n as { code?: string }).code === 'RUNNER_FENCED_OUT');
    expect(fencedOut.length).toBe(2);
    // Their containers were left to A, which finishes the runs: each exec once, attempt 1.
    await until(async () => (await sessions()).every((s) => s.status === 'succeeded'), 'done');
    expect((await sessions()).map((s) => s.attempt)).toEqual([1, 1]);
    expect(b.liveRunners()).toEqual([]);
    await eachExecOnce();
  });

  it('a boot whose own lock connection hangs takes no grants until it holds its lock again', async () => {
    cluster = new SimulatedCluster({ clock: systemClock, nodes: ['m1'] });
    const proxy = await startFreezableProxy({ host: '127.0.0.1', port: 5432 });
    proxies.push(proxy);
    const viaProxy = new URL(server.url);
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    const a = await boot('nodeA', {
      bootLock: {
        holdBootLock: (owner, onState) =>
          holdBootLock({
            client: {
              connectionString: viaProxy.toString(),
              query_timeout: 500,
              connectionTimeoutMillis: 500,
            },
            owner,
            pingMs: 100,
            retryMinMs: 50,
            retryMaxMs: 200,
            closeTimeoutMs: 200,
            timers: REAL_TIMERS,
            onState,
            onError: () => undefined,
          }),
      },
    });
    proxy.freeze();
    await until(() => a.health().lock !== 'held', 'A to see its lock connection hang');
    expect(notices.some((n) => n instanceof BootLockLostError)).toBe(true);
    await submitTo(a, 2, 1);
    // Queued, not granted, while A cannot prove it is alive (a few ticks' worth of looks).
    for (let i = 0; i < 10; i += 1) {
      expect(await running()).toEqual([]);
      await new Promise((r) => setTimeout(r, 50));
    }
    proxy.thaw();
    await until(() => a.health().lock === 'held', 'A to hold its lock again');
    await until(async () => (await sessions()).every((s) => s.status === 'succeeded'), 'done');
    await eachExecOnce();
  });

  /** Behind a transaction pooler: no lock, beats every 200 ms, stale after 3; the periodic pass a minute off. */
  const pooled = {
    bootLock: { holdBootLock: null },
    reconcileLock: false,
    reconcileMs: 60_000,
    heartbeatMs: 200,
    heartbeatStaleBeats: 3,
    livenessPollMs: 100,
  } satisfies Partial<RuntimeOptions>;
  /** Node A running 2, then node B up beside it, both behind the pooler (`watchBeats` as given). */
  const pooledPair = async (watchBeats: boolean) => {
    cluster = new SimulatedCluster({ clock: systemClock, nodes: ['m1'] });
    const a = await boot('nodeA', { ...pooled, watchBeats });
    await submitTo(a, 2, 3);
    await until(async () => (await running()).length === 2, 'A to run 2');
    const b = await boot('nodeB', { ...pooled, watchBeats });
    expect(b.health().lock).toBe('none');
    return { a, b };
  };

  it('without a lock (a transaction pooler), the watch on the rows alone: a stale beat is a DOWN and an adoption at once', async () => {
    const { a, b } = await pooledPair(true);
    a.kill();
    await until(
      async () => (await running()).every((s) => s.owner_node === b.owner),
      'B to adopt',
      10_000,
    );
    expect(downs().map((d) => [d.owner, d.reason])).toEqual([[a.owner, 'beat_stale']]);
    await until(
      async () => (await sessions()).every((s) => s.status === 'succeeded'),
      'the adopted runs to finish from their markers',
    );
    expect((await sessions()).map((s) => s.attempt)).toEqual([1, 1]);
    await eachExecOnce();
  });

  /**
   * Node A beats every 1.5 s and promises 4.5 s (three beats); node B's own
   * window is 900 ms, shorter than A's period. B judges A by A's row, so A's
   * gaps between beats are not deaths; `older` writes A's rows as a node
   * before migration 19 did (no promise), the control. Windows of whole
   * hundreds of ms: the two runtimes share this thread, and a stall of it
   * must not read as a death of either.
   */
  const mixedWindows = async (older: boolean) => {
    cluster = new SimulatedCluster({ clock: systemClock, nodes: ['m1'] });
    if (older)
      await sql`CREATE FUNCTION rt_test_no_promise() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.node_id = 'nodeA' THEN NEW.stale_after_ms := NULL; END IF; RETURN NEW; END $$;
        CREATE TRIGGER rt_test_no_promise BEFORE INSERT OR UPDATE ON node_heartbeats
          FOR EACH ROW EXECUTE FUNCTION rt_test_no_promise()`.execute(server.main.db);
    const a = await boot('nodeA', { ...pooled, watchBeats: true, heartbeatMs: 1_500 });
    await submitTo(a, 2, 12);
    await until(async () => (await running()).length === 2, 'A to run 2');
    const b = await boot('nodeB', { ...pooled, watchBeats: true, heartbeatMs: 300 });
    // Two and a half of A's beat periods, four of B's windows.
    await new Promise((r) => setTimeout(r, 4_000));
    return { a, b };
  };
  const dropNoPromise = () =>
    sql`DROP FUNCTION IF EXISTS rt_test_no_promise() CASCADE`.execute(server.main.db);

  it('each boot is judged by the window its row promises: a node that beats less often than another is not dead for it', async () => {
    const { a, b } = await mixedWindows(false);
    expect(downs()).toEqual([]);
    // The admin's list says the window each boot is judged by: its own.
    const windows = (await b.clusterNodes()).map((n) => [n.owner, n.deadAfterMs]);
    expect(windows).toEqual([
      [a.owner, 4_500],
      [b.owner, 900],
    ]);
    expect((await running()).map((s) => s.owner_node)).toEqual([a.owner, a.owner]);
    // Dead is still dead: killed, A is found by B once its own 4.5 s have passed.
    const killedAt = Date.now();
    a.kill();
    await until(
      async () => (await running()).every((s) => s.owner_node === b.owner),
      'B to adopt',
      10_000,
    );
    expect(Date.now() - killedAt).toBeGreaterThan(2_500);
    expect(downs().map((d) => [d.owner, d.reason])).toEqual([[a.owner, 'beat_stale']]);
    await until(async () => (await sessions()).every((s) => s.status === 'succeeded'), 'done');
    expect((await sessions()).map((s) => s.attempt)).toEqual([1, 1]);
    await eachExecOnce();
  });

  it('the control: a row with no promise (an older node) is judged by the reader window, and a live A loses its runs', async () => {
    try {
      const { a, b } = await mixedWindows(true);
      expect(downs().some((d) => d.owner === a.owner && d.reason === 'beat_stale')).toBe(true);
      const seen = (await b.clusterNodes()).find((n) => n.owner === a.owner);
      expect(seen?.deadAfterMs).toBe(900);
    } finally {
      await dropNoPromise();
    }
  });

  it('the control: without the watch, a stale beat waits for the periodic pass', async () => {
    const { a } = await pooledPair(false);
    a.kill();
    // Five stale windows later, nobody has looked.
    await new Promise((r) => setTimeout(r, 3_000));
    expect((await running()).map((s) => s.owner_node)).toEqual([a.owner, a.owner]);
    expect(downs()).toEqual([]);
  });
});

describeEachEngine('cluster liveness, one node', (getDb) => {
  it('on PGlite takes no lock (one process: the node is alone), keeps the Reconciler lock off, and runs work', async () => {
    const t = getDb();
    const h = await t.connectAnother();
    const sim = new SimulatedCluster({ clock: systemClock, nodes: ['m1'] });
    const errors: unknown[] = [];
    const rt = await createRuntime({
      ...simulatedNodeOptions(h, sim, 'solo', (e) => errors.push(e)),
      caps: { maxRunning: 2, defaultUserCap: 2 },
    });
    try {
      const alone = t.engine === 'pglite';
      expect(h.holdBootLock === null).toBe(alone);
      expect(rt.health().lock).toBe(alone ? 'none' : 'held');
      await rt.booted;
      const created = await rt.submit('u1', { title: 't', image: 'sim', command: ['sleep', '0'] });
      await until(
        async () =>
          (
            await h.db
              .selectFrom('sessions')
              .select('status')
              .where('id', '=', created.session.id)
              .executeTakeFirstOrThrow()
          ).status === 'succeeded',
        'the run to finish',
        60_000,
      );
      // The boot's own row appears with its first beat, which runs apart from the work.
      await until(
        async () => (await rt.clusterNodes()).length > 0,
        'the own heartbeat row',
        20_000,
      );
      const nodes = await rt.clusterNodes();
      expect(nodes.map((n) => [n.owner, n.lock, n.self, n.sessionsOwned])).toEqual([
        [rt.owner, alone ? 'unknown' : 'held', true, 0],
      ]);
      expect(errors).toEqual([]);
    } finally {
      await rt.stop();
      if (t.engine !== 'pglite') await h.close();
    }
  }, 120_000);
});
