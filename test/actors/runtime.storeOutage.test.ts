/**
 * A node rides out a Postgres outage (issue 14, item 5): a private server
 * (initdb/pg_ctl on its own port) is stopped under a node with work queued
 * and running, for ~10 s, `-m fast` and `-m immediate`, then started again.
 * Runs that end meanwhile wait in the dispatcher's outbox (retried with
 * backoff, not crashing their runners); once the server answers, the next
 * tick commits within 2 s (not at the next Reconciler pass, 60 s away),
 * every task succeeds, and every command ran exactly once.
 *
 * Real clock and real server: the only tests of the runtime that sleep on
 * real time, each bounded (well under 60 s).
 */
import { sql } from 'kysely';
import { afterEach, expect, it } from 'vitest';
import { createRuntime } from '../../src/actors/runtime.js';
import type { Runtime, RuntimeExit } from '../../src/actors/runtimeTypes.js';
import { SimulatedBackend } from '../../src/containers/simulated/SimulatedBackend.js';
import { SimulatedCluster } from '../../src/containers/simulated/SimulatedCluster.js';
import { connect, currentTick, type DbHandle, migrate } from '../../src/db/index.js';
import { isTransientDbError } from '../../src/db/transientErrors.js';
import { systemClock } from '../../src/supervisor/clock.js';
import { describeWithPrivatePostgres } from '../support/privatePostgres.js';

/** How long the server stays down. */
const OUTAGE_MS = 10_000;
/** Issue 14: work moves within 2 s of the server answering. */
const RESUME_DEADLINE_MS = 2_000;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `probe` every `everyMs` until it returns a value, or throws at the deadline. */
async function until<T>(
  what: string,
  deadlineMs: number,
  probe: () => Promise<T | undefined>,
  everyMs = 20,
): Promise<T> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const got = await probe().catch(() => undefined);
    if (got !== undefined) return got;
    if (Date.now() > end) throw new Error(`timed out after ${deadlineMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Rejects after `ms` (real time) unless `p` settles first. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

describeWithPrivatePostgres('runtime through a Postgres outage [private server]', (getServer) => {
  const handles: DbHandle[] = [];
  let runtime: Runtime | undefined;
  afterEach(async () => {
    await runtime?.stop().catch(() => undefined);
    runtime = undefined;
    for (const h of handles.splice(0)) await h.close().catch(() => undefined);
  });

  it.each(['fast', 'immediate'] as const)(
    'stopped -m %s for ~10 s: work moves within 2 s of the server answering, nothing lost, nothing run twice',
    async (mode) => {
      const server = getServer();
      await server.start();
      const poolErrors: Error[] = [];
      const open = async () => {
        const h = await connect({
          databaseUrl: server.url,
          connectTimeoutMs: 1_000,
          onPoolError: (e) => poolErrors.push(e),
        });
        handles.push(h);
        return h;
      };
      const handle = await open();
      // The private server trades durability for speed (synchronous_commit
      // off): a commit acknowledged up to ~600 ms before `-m immediate`
      // would be lost in crash recovery, and with it a tick the node was
      // told had committed. Production servers commit synchronously; so does this one.
      await sql`ALTER SYSTEM SET synchronous_commit = on`.execute(handle.db);
      await sql`SELECT pg_reload_conf()`.execute(handle.db);
      // The test's own eyes on the rows, on a pool of its own.
      const observer = await open();
      await migrate(handle.db);
      const tables = await sql<{ t: string }>`
        SELECT tablename AS t FROM pg_tables
        WHERE schemaname = current_schema() AND tablename <> 'schema_migrations'`.execute(
        handle.db,
      );
      await sql
        .raw(`TRUNCATE ${tables.rows.map((r) => `"${r.t}"`).join(', ')} RESTART IDENTITY CASCADE`)
        .execute(handle.db);

      const cluster = new SimulatedCluster({ clock: systemClock });
      const errors: unknown[] = [];
      runtime = await createRuntime({
        db: handle.db,
        backend: new SimulatedBackend(cluster),
        clock: systemClock,
        caps: { maxRunning: 4, defaultUserCap: 2 },
        notifications: handle,
        nodeId: `pg-${mode}`,
        // The periodic pass is far away: a resume within 2 s is the dispatcher's own.
        reconcileMs: 60_000,
        pollMs: 500,
        // Longer than this outage: a submission made in it waits for the
        // store (a shorter mark answers it 503 instead: httpApi.storeOutage.test.ts).
        commandOutageMs: 60_000,
        onError: (e) => errors.push(e),
      });
      const rt = runtime;
      let exited: RuntimeExit | undefined;
      void rt.exited.then((e) => {
        exited = e;
      });
      await within(rt.booted, 10_000, 'booted');

      // Two waves on a cap of 4: the first ends during the outage, the
      // second waits queued for the grants those ends free.
      const users = ['ann', 'bob', 'cy', 'dee'];
      const submitted: { taskId: string; tag: string }[] = [];
      for (let i = 0; i < 8; i++) {
        const tag = `${mode}-${i}`;
        const seconds = i < 4 ? '2' : '1';
        const created = await rt.submit(users[i % users.length] as string, {
          title: tag,
          image: 'runner:v1',
          command: i % 2 === 0 ? ['sleep', seconds, tag] : ['agent', seconds, '0', tag],
        });
        submitted.push({ taskId: created.task.id, tag });
      }
      await until('4 running', 5_000, async () =>
        rt.health().holding === 4 && cluster.execLog().length === 4 ? true : undefined,
      );
      const tickBefore = await currentTick(observer.db);

      // ---- the outage --------------------------------------------------
      const downAt = Date.now();
      await server.stop(mode);
      // Submitted while down: acknowledged only once its tick commits, after the restart.
      const late = rt.submit('eve', {
        title: `${mode}-late`,
        image: 'runner:v1',
        command: ['sleep', '1', `${mode}-late`],
      });
      let lateAt: number | undefined;
      void late.then(
        () => {
          lateAt = Date.now();
        },
        () => undefined,
      );
      await sleep(Math.max(0, OUTAGE_MS - (Date.now() - downAt)));
      // The first wave ended while the store was down: its finishes wait in the outbox.
      expect(cluster.execLog()).toHaveLength(4);
      expect(lateAt).toBeUndefined();
      expect(exited).toBeUndefined();
      // Between two tries of the failing tick its ops are back in the
      // outbox; during a try they are in flight and the backlog reads 0 (a
      // CI run sampled once, on a loaded machine, and read 0). So look for
      // a while: the server stays down until this is seen.
      const backlogDuringOutage = await until(
        'a backlog during the outage',
        3_000,
        async () => (rt.health().backlog >= 1 ? rt.health().backlog : undefined),
        5,
      );

      await server.start();
      const startedAt = Date.now();
      // Server answering: the first query of our own that succeeds.
      const answeredAt = await until(
        'the server to answer',
        10_000,
        async () => {
          await sql`SELECT 1`.execute(observer.db);
          return Date.now();
        },
        5,
      );
      const { tick: tickAfter, at: committedAt } = await until(
        'the next committed tick',
        RESUME_DEADLINE_MS + 3_000,
        async () => {
          const t = await currentTick(observer.db);
          return t > tickBefore ? { tick: t, at: Date.now() } : undefined;
        },
        5,
      );
      const resumeMs = committedAt - answeredAt;
      console.log(
        `[store outage -m ${mode}] down ${startedAt - downAt} ms; pg_ctl start → first answer ` +
          `${answeredAt - startedAt} ms; server answering → next committed tick ${resumeMs} ms ` +
          `(tick ${tickBefore} → ${tickAfter}); backlog during the outage ${backlogDuringOutage}`,
      );
      expect(resumeMs).toBeLessThanOrEqual(RESUME_DEADLINE_MS);

      const lateTask = await within(late, 5_000, 'the submit made during the outage');
      expect(lateAt).toBeGreaterThanOrEqual(startedAt);
      submitted.push({ taskId: lateTask.task.id, tag: `${mode}-late` });

      // ---- everything finishes, once -----------------------------------
      const rowsNow = () =>
        observer.db
          .selectFrom('sessions')
          .select(['id', 'task_id', 'status', 'failure_reason', 'owner_node', 'epoch'])
          .orderBy('enqueued_at')
          .execute();
      await until(
        'every task to succeed',
        20_000,
        async () => {
          const { rows } = await sql<{ n: string }>`
          SELECT count(*)::text AS n FROM sessions WHERE status = 'succeeded'`.execute(observer.db);
          return Number(rows[0]?.n) === submitted.length ? true : undefined;
        },
        50,
      ).catch(async (error: unknown) => {
        const health = rt.health();
        throw new Error(
          `${String(error)}\nrows: ${JSON.stringify(await rowsNow())}\nhealth: ${JSON.stringify(health)}` +
            `\nlive runners: ${rt.liveRunners().join(',')}\nexecs: ${cluster.execLog().length}` +
            `\nerrors: ${errors.map(String).join('\n  ')}`,
        );
      });
      const sessions = await rowsNow();
      // One attempt per task: nothing was re-queued (no runner_lost, no owner_lost).
      expect(sessions).toHaveLength(submitted.length);
      expect(sessions.every((s) => s.status === 'succeeded')).toBe(true);
      for (const { tag } of submitted) {
        const runs = cluster.execLog().filter((e) => e.command.includes(tag));
        expect(runs, `${tag} ran exactly once`).toHaveLength(1);
      }
      const cards = rt.cards(null);
      expect(cards.filter((c) => c.column === 'done')).toHaveLength(submitted.length);

      // No runner crashed its supervisor past its intensity; the tree stands.
      await sleep(50);
      expect(exited).toBeUndefined();
      const { restartsTotal, ticksTotal, grantsTotal } = rt.metrics();
      expect(restartsTotal).toBe(0);
      // /metrics saw the outage: ticks that failed (and were sent again), and every grant.
      expect(ticksTotal.failed).toBeGreaterThan(0);
      expect(ticksTotal.ok).toBeGreaterThan(0);
      expect(grantsTotal).toBeGreaterThanOrEqual(submitted.length);
      expect(rt.liveRunners()).toEqual([]);
      // What the node reported meanwhile were conditions, not bugs.
      const bugs = errors.filter((e) => !isTransientDbError(e));
      expect(bugs.map(String)).toEqual([]);
      console.log(
        `[store outage -m ${mode}] ${errors.length} transient errors reported, ` +
          `${poolErrors.length} pool errors, restartsTotal ${restartsTotal}`,
      );
    },
    60_000,
  );
});
