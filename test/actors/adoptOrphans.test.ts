/**
 * Step 2's batched adoption on a real store: a dead node's runs are judged
 * once per owner, fenced a batch per statement (the statement count does not
 * grow with the runs), and handed to their runners as fenced rows; an owner
 * that comes back before the fence keeps its runs, a live one is never
 * looked at, and a row that moved on is left alone. A live owner's run
 * past its time limit by more than the grace is the exception: taken from
 * it to be timed out here (src/actors/overdueRuns.ts).
 */
import { type KyselyPlugin, sql } from 'kysely';
import { expect, it } from 'vitest';
import { ADOPT_BATCH, adoptOrphans } from '../../src/actors/adoptOrphans.js';
import type { ReconcilerDeps } from '../../src/actors/reconcilerDeps.js';
import type { ContainerBackend, Observation } from '../../src/containers/ContainerBackend.js';
import { createTasksWithSessions, getSession, type Session } from '../../src/db/index.js';
import type { Db } from '../../src/db/transaction.js';
import { UNOBSERVABLE_GRACE_MS } from '../../src/machines/recoveryPolicy.js';
import { SPEC, steppingClock } from '../db/fixtures.js';
import { describeEachEngine } from '../support/databases.js';

/**
 * `n` runs under `owner` at epoch 1, each with a handle. Set up in bulk:
 * the rows are what matters here, not how they got there.
 */
async function runs(db: Db, n: number, owner: string, now: () => Date): Promise<string[]> {
  const at = now();
  const created = await createTasksWithSessions(
    db,
    Array.from({ length: n }, (_, i) => ({
      userId: `u${i % 4}`,
      title: `t${i}`,
      spec: SPEC,
      now: at,
    })),
  );
  const ids = created.map((c) => c.session.id);
  await db
    .updateTable('sessions')
    .set({
      status: 'running',
      epoch: 1,
      owner_node: owner,
      claimed_at: at,
      backend: 'local',
      handle: sql<string>`'rt-' || id || ':1.1.b'`,
    })
    .where('id', 'in', ids)
    .execute();
  return ids;
}

/** Counts the statements sent through it. */
function counted(db: Db): { db: Db; statements: () => number } {
  let n = 0;
  const plugin: KyselyPlugin = {
    transformQuery: (a) => {
      n += 1;
      return a.node;
    },
    transformResult: async (a) => a.result,
  };
  return { db: db.withPlugin(plugin), statements: () => n };
}

/** How long past its limit a live owner's run is left to it, in these tests. */
const OVERDUE_GRACE_MS = 60_000;

function deps(db: Db, alive: (owner: string, call: number) => boolean) {
  const adopted: Session[] = [];
  let calls = 0;
  const backend = {
    kind: 'local',
    adoptable: true,
    observe: async (): Promise<Observation> => ({
      presence: 'present',
      containerStartedAt: null,
      marker: null,
    }),
  } as unknown as ContainerBackend;
  const d: ReconcilerDeps = {
    db,
    backend,
    submit: async () => {
      throw new Error('no run here is failed');
    },
    repair: async () => [],
    poke: () => {},
    owner: 'new@2',
    now: () => Date.parse('2026-07-14T12:00:00Z'),
    overdueGraceMs: OVERDUE_GRACE_MS,
    liveness: {
      isAlive: async (owner) => {
        calls += 1;
        return alive(owner, calls);
      },
    },
    liveRunners: () => new Set(),
    runAdopted: async (s) => {
      adopted.push(s);
    },
    stopRunner: () => {},
    onError: (e) => {
      throw e;
    },
    onGiveUp: () => {},
  };
  return { deps: d, adopted, livenessCalls: () => calls };
}

describeEachEngine('Reconciler step 2: batched adoption', (getDb) => {
  it(`fences a dead node's ${ADOPT_BATCH + 10} runs in two statements and hands each runner its fenced row`, async () => {
    const { db } = getDb();
    const now = steppingClock();
    const ids = await runs(db, ADOPT_BATCH + 10, 'old@1', now);
    const c = counted(db);
    const t = deps(c.db, () => false);
    const report = await adoptOrphans(t.deps);
    expect([...report.adopted].sort()).toEqual([...ids].sort());
    expect(report.failed).toEqual([]);
    // listRunning, then one adoptMany per batch: nothing per run.
    expect(c.statements()).toBe(3);
    // Once at the decisions, once before each batch's fence.
    expect(t.livenessCalls()).toBe(3);
    expect(t.adopted).toHaveLength(ids.length);
    for (const s of t.adopted) expect(s).toMatchObject({ owner: 'new@2', epoch: 2 });
    expect(await getSession(db, ids[0] as string)).toMatchObject({ owner: 'new@2', epoch: 2 });
  });

  it('an owner seen dead at the decisions but alive at the fence keeps its runs', async () => {
    const { db } = getDb();
    const now = steppingClock();
    const ids = await runs(db, 3, 'flaky@1', now);
    const t = deps(db, (_owner, call) => call > 1);
    const report = await adoptOrphans(t.deps);
    expect(report.adopted).toEqual([]);
    expect(t.adopted).toEqual([]);
    for (const id of ids)
      expect(await getSession(db, id)).toMatchObject({ owner: 'flaky@1', epoch: 1 });
  });

  it("a live owner's runs and runs with a runner here are left alone; this boot's runner-less run is adopted", async () => {
    const { db } = getDb();
    const now = steppingClock();
    const [liveOne] = await runs(db, 1, 'live@1', now);
    const [ours, oursRunning] = await runs(db, 2, 'new@2', now);
    const t = deps(db, (owner) => owner === 'live@1');
    t.deps.liveRunners = () => new Set([oursRunning as string]);
    const report = await adoptOrphans(t.deps);
    expect(report.adopted).toEqual([ours]);
    expect(t.adopted.map((s) => [s.id, s.epoch])).toEqual([[ours, 2]]);
    expect(await getSession(db, liveOne as string)).toMatchObject({ owner: 'live@1', epoch: 1 });
    expect(await getSession(db, oursRunning as string)).toMatchObject({ epoch: 1 });
  });

  it('a row another node adopted between the decisions and the fence is not adopted again', async () => {
    const { db } = getDb();
    const now = steppingClock();
    const [a, b] = (await runs(db, 2, 'old@1', now)) as [string, string];
    const t = deps(db, () => false);
    const observe = t.deps.backend.observe.bind(t.deps.backend);
    // The other node fences `a` while this pass observes it.
    t.deps.backend = {
      ...t.deps.backend,
      observe: async (ref) => {
        if (ref.sessionId === a) {
          const { adopt } = await import('../../src/db/index.js');
          await adopt(db, { sessionId: a, epoch: 1, owner: 'other@3', now: now() });
        }
        return observe(ref);
      },
    } as ContainerBackend;
    const report = await adoptOrphans(t.deps);
    expect(report.adopted).toEqual([b]);
    expect(await getSession(db, a)).toMatchObject({ owner: 'other@3', epoch: 2 });
  });

  it('a run nobody here can observe is left to its owner for the grace, then failed saying so', async () => {
    const { db } = getDb();
    const now = steppingClock();
    const [far, gone] = (await runs(db, 2, 'old@1', now)) as [string, string];
    const t = deps(db, () => false);
    let at = Date.parse('2026-07-14T12:00:00Z');
    t.deps.now = () => at;
    t.deps.unobservedSince = new Map();
    t.deps.backend = {
      ...t.deps.backend,
      observe: async (ref) => ({
        presence: ref.sessionId === far ? 'unobservable' : 'absent',
        containerStartedAt: null,
        marker: null,
      }),
    } as ContainerBackend;
    const failed: Array<[string, string]> = [];
    t.deps.submit = async (op) => {
      if (op.op !== 'finish') throw new Error(`unexpected ${op.op}`);
      failed.push([op.sessionId, op.reason ?? '']);
      return { kind: 'applied' } as Awaited<ReturnType<ReconcilerDeps['submit']>>;
    };
    // The one seen absent is failed at once; the unobservable one waits, pass after pass.
    expect((await adoptOrphans(t.deps)).adopted).toEqual([]);
    expect(failed).toEqual([[gone, 'owner_lost']]);
    at += UNOBSERVABLE_GRACE_MS - 1;
    await adoptOrphans(t.deps);
    // (The fake submit leaves the absent one's row running: it is failed again, not the other.)
    expect(failed.filter(([id]) => id === far)).toEqual([]);
    expect(await getSession(db, far)).toMatchObject({ status: 'running', epoch: 1 });
    at += 1;
    failed.length = 0;
    await adoptOrphans(t.deps);
    expect(failed.find(([id]) => id === far)?.[1]).toMatch(
      /^owner_lost: the run could not be observed/,
    );
  });

  /** Grants `ids` at `at` and gives their tasks `limits` (null: none), as ticks would have. */
  async function granted(db: Db, ids: string[], at: string, limits: Array<number | null>) {
    await db
      .updateTable('sessions')
      .set({ claimed_at: new Date(at) })
      .where('id', 'in', ids)
      .execute();
    for (const [i, id] of ids.entries())
      await sql`UPDATE tasks SET time_limit_ms = ${limits[i] ?? null}
        WHERE id = (SELECT task_id FROM sessions WHERE id = ${id})`.execute(db);
  }

  it("a live owner's run past its time limit by more than the grace is taken to be timed out; inside the grace, without a limit, or without its container, it is left", async () => {
    const { db } = getDb();
    const ids = (await runs(db, 4, 'before-limits@1', steppingClock())) as [
      string,
      string,
      string,
      string,
    ];
    const [past, inGrace, noLimit, noContainer] = ids;
    // The pass runs at 12:00; each was granted an hour before.
    const hour = 3_600_000;
    await granted(db, ids, '2026-07-14T11:00:00Z', [
      hour - OVERDUE_GRACE_MS - 1,
      hour - OVERDUE_GRACE_MS,
      null,
      1_000,
    ]);
    const t = deps(db, () => true);
    const observe = t.deps.backend.observe.bind(t.deps.backend);
    t.deps.backend = {
      ...t.deps.backend,
      observe: async (ref) =>
        ref.sessionId === noContainer
          ? { presence: 'absent', containerStartedAt: null, marker: null }
          : observe(ref),
    } as ContainerBackend;
    const notices: unknown[] = [];
    t.deps.onError = (e) => notices.push(e);
    const told: Array<[string, number | null]> = [];
    t.deps.runAdopted = async (s, limitMs) => {
      told.push([s.id, limitMs]);
    };
    const report = await adoptOrphans(t.deps);
    expect(report).toMatchObject({ adopted: [past], overdue: [past], failed: [] });
    // Its runner here is told the limit, which is past: it times the run out at once.
    expect(told).toEqual([[past, hour - OVERDUE_GRACE_MS - 1]]);
    expect(await getSession(db, past)).toMatchObject({ owner: 'new@2', epoch: 2 });
    expect(notices).toEqual([
      expect.objectContaining({
        code: 'OVERDUE_RUN_TAKEN',
        sessionId: past,
        owner: 'before-limits@1',
        limitMs: hour - OVERDUE_GRACE_MS - 1,
        graceMs: OVERDUE_GRACE_MS,
      }),
    ]);
    for (const id of [inGrace, noLimit, noContainer])
      expect(await getSession(db, id)).toMatchObject({ owner: 'before-limits@1', epoch: 1 });
  });

  it("no limit is read while every live owner's run is younger than the smallest limit and the grace; without a grace, or on a backend that cannot adopt, none is taken", async () => {
    const { db } = getDb();
    const ids = await runs(db, 3, 'live@1', steppingClock());
    await granted(db, ids, '2026-07-14T11:59:00Z', [1_000, 1_000, 1_000]);
    const c = counted(db);
    const t = deps(c.db, () => true);
    expect(await adoptOrphans(t.deps)).toMatchObject({ adopted: [], overdue: [] });
    // listRunning alone.
    expect(c.statements()).toBe(1);

    await granted(db, ids, '2026-07-14T11:00:00Z', [1_000, 1_000, 1_000]);
    const { overdueGraceMs: _, ...noGrace } = t.deps;
    expect(await adoptOrphans(noGrace)).toMatchObject({ adopted: [], overdue: [] });
    expect(c.statements()).toBe(2);
    t.deps.backend = { ...t.deps.backend, adoptable: false } as ContainerBackend;
    expect(await adoptOrphans(t.deps)).toMatchObject({ adopted: [], overdue: [] });
    for (const id of ids) expect(await getSession(db, id)).toMatchObject({ epoch: 1 });
  });
});
