/**
 * The Reconciler's steps, each its own function, and the pass that runs
 * them in the order DESIGN.md fixes. Each step re-reads the rows it needs:
 * the previous step may have changed them, and that is the point.
 */
import type { ContainerBackend } from '../containers/ContainerBackend.js';
import { adoptMany, type Db, listRunning, newId, type Session } from '../db/index.js';
import type { TickFinish, TickOutcome } from '../db/tickTypes.js';
import { recoveryAction, recoveryFailReason } from '../machines/recoveryPolicy.js';
import type { OwnerLiveness } from './ownerLiveness.js';

export interface ReconcilerDeps {
  db: Db;
  backend: ContainerBackend;
  /** Writes through the dispatcher's next tick (fail and re-queue counts against the caps). */
  submit(op: Omit<TickFinish, 'ref'>): Promise<TickOutcome>;
  /** Recomputes the dispatch counters from the rows under the tick's lock; what it fixed. */
  repair(): Promise<string[]>;
  /**
   * Vacuums the tables every tick rewrites (PGlite never autovacuums, and
   * dead row versions would slow every later tick); optional.
   */
  vacuum?(): Promise<void>;
  /** Asks the dispatcher for a tick: queued work may be grantable. */
  poke(): void;
  /** This boot's owner name. */
  owner: string;
  now: () => number;
  liveness: OwnerLiveness;
  /** Image the boot sweep re-pins every run to; none: step 1 has nothing to do. */
  runnerImage?: string | undefined;
  /** Sessions with a live TaskRunner in this boot. */
  liveRunners(): ReadonlySet<string>;
  /**
   * Starts a TaskRunner for a run this pass fenced (`adoptMany`): it goes on
   * from `session`, the fenced row (no-op when the session has a runner).
   */
  runAdopted(session: Session): Promise<void>;
  /** Stops a session's TaskRunner, if any (its row was moved on under it). */
  stopRunner(sessionId: string): void;
  onChanged(taskId: string): void;
  onError(error: unknown): void;
  onGiveUp(reason: string): void;
  /** Aborted when the pass is abandoned: each step stops before its next row. */
  signal?: AbortSignal;
  /**
   * When each run was first seen `unobservable`, kept across passes (the
   * Reconciler owns one); absent (step tests): every pass counts from 0.
   */
  unobservedSince?: Map<string, number>;
}

/** What one pass did, step by step, for logs and tests. */
export interface PassReport {
  repinned: string[];
  adopted: string[];
  failed: string[];
  removedHandles: string[];
  /** Dispatch counters step 4 found wrong and repaired (should stay empty). */
  repaired: string[];
}

const emptyReport = (): PassReport => ({
  repinned: [],
  adopted: [],
  failed: [],
  removedHandles: [],
  repaired: [],
});

/**
 * Fails and re-queues at the head of its user's line (the infrastructure
 * ended the run, not the user: it keeps its place), through the tick, so
 * the freed slot is counted and granted in the same commit. A row that
 * moved on meanwhile is simply not ours to fix.
 */
async function recover(deps: ReconcilerDeps, s: Session, reason: string): Promise<boolean> {
  const outcome = await deps.submit({
    op: 'finish',
    sessionId: s.id,
    epoch: s.epoch,
    status: 'failed',
    exitCode: null,
    reason,
    userRecoverable: true,
    output: null,
    column: 'queued',
    requeue: { sessionId: newId('session') },
  });
  if (outcome.kind !== 'applied') return false;
  deps.onGiveUp(reason);
  deps.onChanged(s.taskId);
  return true;
}

/**
 * Step 1: re-pin every run to the runner image and recover the sessions
 * whose containers that replaced. Their marker and output lived in the old
 * container's /tmp, so an adoption could only poll for nothing: fail them
 * as `container_replaced` and queue them again, now.
 */
export async function recoverRepinned(
  deps: ReconcilerDeps,
  report = emptyReport(),
): Promise<PassReport> {
  if (deps.runnerImage === undefined) return report;
  const repinned = await deps.backend.repin(deps.runnerImage);
  if (repinned.length === 0) return report;
  const ids = new Set(repinned.map((r) => r.sessionId));
  for (const s of await listRunning(deps.db)) {
    deps.signal?.throwIfAborted();
    if (!ids.has(s.id)) continue;
    deps.stopRunner(s.id);
    if (await recover(deps, s, 'container_replaced')) report.repinned.push(s.id);
  }
  return report;
}

/**
 * Step 2: running sessions whose owner is gone. An owner is gone when it is
 * another boot that the liveness port does not vouch for, or this boot with
 * no TaskRunner for the session (its runner supervisor gave up on it).
 * `recoveryAction` decides: adopt or fail and re-queue.
 *
 * Adoption is batched: the decisions (one liveness judgement per owner, one
 * observation per run, ORPHAN_CONCURRENCY at a time) come first; then the
 * runs to adopt are fenced ADOPT_BATCH per statement (`adoptMany`: each row
 * a compare-and-set on its epoch, so a row that moved on is left alone),
 * their owners judged again just before, so only the dead are adopted; and
 * each fenced run gets its TaskRunner, which starts from the fenced row with
 * no read or write of its own. A node's two hundred runs cost two
 * statements, not a thousand.
 */
export async function adoptOrphans(
  deps: ReconcilerDeps,
  report = emptyReport(),
): Promise<PassReport> {
  const startedAt = deps.now();
  const live = deps.liveRunners();
  const rows = await listRunning(deps.db);
  const running = new Set(rows.map((s) => s.id));
  for (const id of deps.unobservedSince?.keys() ?? []) {
    if (!running.has(id)) deps.unobservedSince?.delete(id);
  }
  const done: Array<'adopted' | 'failed' | undefined> = new Array(rows.length);
  const gone = ownersGone(deps);
  const toAdopt: number[] = [];
  // The fail-and-re-queue writes are not awaited row by row: they wait in
  // the dispatcher's outbox together, so a dead node's thousand runs ride
  // two ticks of up to 500 ops, not sixteen of 64 (the decisions, which
  // observe the backend, stay ORPHAN_CONCURRENCY at a time).
  const writes: Promise<void>[] = [];
  const decided = eachLimited(rows, ORPHAN_CONCURRENCY, async (s, i) => {
    deps.signal?.throwIfAborted();
    if (live.has(s.id)) return;
    if (s.owner === deps.owner && startingHere(deps, s, startedAt)) return;
    if (!(await gone(s.owner))) return;
    const presence =
      s.handle === null
        ? 'absent'
        : (await deps.backend.observe({ sessionId: s.id, handle: s.handle })).presence;
    const action = recoveryAction({
      backend: s.backend ?? deps.backend.kind,
      kind: s.kind,
      handle: s.handle,
      presence,
      unobservableForMs: unobservableFor(deps, s.id, presence),
    });
    if (action === 'wait') return;
    if (action === 'adopt' && deps.backend.adoptable) toAdopt.push(i);
    else
      writes.push(
        recover(deps, s, recoveryFailReason(presence)).then((ok) => {
          if (ok) done[i] = 'failed';
        }),
      );
  });
  // Every write settles before the pass goes on (or fails), even when a decision failed.
  const [decisions] = await Promise.allSettled([decided]);
  const written = await Promise.allSettled(writes);
  const firstError = [decisions, ...written].find((r) => r?.status === 'rejected');
  if (firstError?.status === 'rejected') throw firstError.reason;
  for (let from = 0; from < toAdopt.length; from += ADOPT_BATCH) {
    deps.signal?.throwIfAborted();
    const batch = toAdopt.slice(from, from + ADOPT_BATCH);
    for (const i of await fenceOrphans(
      deps,
      batch.map((i) => rows[i] as Session),
    ))
      done[batch[i] as number] = 'adopted';
  }
  rows.forEach((s, i) => {
    if (done[i] !== undefined) report[done[i]].push(s.id);
  });
  return report;
}

/**
 * How long this node has seen the run `unobservable` pass after pass, by
 * `deps.unobservedSince` (kept by the Reconciler across passes; a new
 * leader starts its own count, so the grace is at least the documented one).
 */
function unobservableFor(deps: ReconcilerDeps, sessionId: string, presence: string): number {
  const since = deps.unobservedSince;
  if (since === undefined) return 0;
  if (presence !== 'unobservable') {
    since.delete(sessionId);
    return 0;
  }
  const first = since.get(sessionId) ?? deps.now();
  since.set(sessionId, first);
  return deps.now() - first;
}

/**
 * A run this boot claimed just now may not have its runner yet: the rows
 * can show a grant before the tick's reply has reached the dispatcher (the
 * chaos test saw a boot fail its own fresh runs as `owner_lost`, which then
 * ran twice). Left to a later pass; a runner that is lost for real is
 * released by the dispatcher itself, or recovered then.
 */
function startingHere(deps: ReconcilerDeps, s: Session, passStartedAt: number): boolean {
  if (deps.liveRunners().has(s.id)) return true;
  const claimed = s.claimedAt?.getTime();
  return claimed !== undefined && claimed > passStartedAt - OWN_CLAIM_GRACE_MS;
}

/** How long a run this boot claimed counts as starting, not orphaned. */
const OWN_CLAIM_GRACE_MS = 5_000;

/**
 * Whether a row's owner is gone, judged once per owner in a pass: this
 * boot (its run has no runner here), no owner, or a boot the liveness port
 * does not vouch for.
 */
function ownersGone(deps: ReconcilerDeps): (owner: string | null) => Promise<boolean> {
  const judged = new Map<string, Promise<boolean>>();
  return (owner) => {
    if (owner === null || owner === deps.owner) return Promise.resolve(true);
    let gone = judged.get(owner);
    if (gone === undefined) {
      gone = deps.liveness.isAlive(owner).then((alive) => !alive);
      judged.set(owner, gone);
    }
    return gone;
  };
}

/**
 * Fences `orphans` in one statement and starts their runners; the indexes
 * (into `orphans`) of the runs adopted. Their owners are judged again first,
 * fresh: an owner that came back since the decisions keeps its runs.
 */
async function fenceOrphans(deps: ReconcilerDeps, orphans: Session[]): Promise<number[]> {
  const gone = ownersGone(deps);
  const dead = await Promise.all(orphans.map((s) => gone(s.owner)));
  const want = orphans.filter((_, i) => dead[i]);
  if (want.length === 0) return [];
  deps.signal?.throwIfAborted();
  const { adopted } = await adoptMany(deps.db, {
    sessions: want.map((s) => ({ sessionId: s.id, epoch: s.epoch })),
    owner: deps.owner,
    now: new Date(deps.now()),
  });
  const fenced = new Map(adopted.map((s) => [s.id, s]));
  await eachLimited(adopted, ORPHAN_CONCURRENCY, (s) => deps.runAdopted(s));
  return orphans.flatMap((s, i) => (fenced.has(s.id) ? [i] : []));
}

/** Orphans handled at once by one pass. */
const ORPHAN_CONCURRENCY = 64;
/** Orphans fenced by one statement. */
export const ADOPT_BATCH = 250;

/** Runs `fn` over `items`, at most `limit` at a time; rejects with the first error. */
async function eachLimited<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        await fn(items[i] as T, i);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * Step 3: remove services that no running session owns (finished runs whose
 * removal failed, runs of sessions failed by steps 1 and 2, a start that
 * crashed before recording its handle).
 */
export async function sweepStaleHandles(
  deps: ReconcilerDeps,
  report = emptyReport(),
): Promise<PassReport> {
  const running = new Map((await listRunning(deps.db)).map((s) => [s.id, s]));
  for (const ref of await deps.backend.listHandles()) {
    deps.signal?.throwIfAborted();
    const s = running.get(ref.sessionId);
    // A running session with no handle yet may be mid-start: its service is kept.
    if (s !== undefined && (s.handle === null || s.handle === ref.handle)) continue;
    try {
      await deps.backend.remove(ref);
      report.removedHandles.push(ref.handle);
    } catch (error) {
      deps.onError(error);
    }
  }
  return report;
}

/**
 * Step 4: the dispatch counters (`user_lines`, `dispatch_state`) recomputed
 * from the rows under the tick's lock, repairing any drift, then a tick:
 * queued work after a deploy is granted by the database in its order, by
 * whichever node has room, not restarted here.
 */
export async function repairDispatch(
  deps: ReconcilerDeps,
  report = emptyReport(),
): Promise<PassReport> {
  report.repaired.push(...(await deps.repair()));
  await deps.vacuum?.();
  deps.poke();
  return report;
}

/**
 * One pass. THE ORDER IS A CONTRACT, not a detail:
 * 1 before 2, because the re-pin replaces containers, and a session whose
 *   container it replaced can never show its marker: adopting it would only
 *   poll until a give-up that step 1 can declare at once;
 * 2 before 3, so a run being adopted still has its service when the sweep
 *   looks (the sweep spares what running rows own), and the runs step 2
 *   failed lose theirs in the same pass;
 * 4 last, so the counters are recomputed from the rows as steps 1-3 left them.
 */
export async function reconcilePass(
  deps: ReconcilerDeps,
  options: { boot: boolean; signal?: AbortSignal },
): Promise<PassReport> {
  const report = emptyReport();
  // An abandoned pass (past its deadline) stops at the next step or row.
  const d = options.signal === undefined ? deps : { ...deps, signal: options.signal };
  if (options.boot) await recoverRepinned(d, report);
  options.signal?.throwIfAborted();
  await adoptOrphans(d, report);
  options.signal?.throwIfAborted();
  await sweepStaleHandles(d, report);
  options.signal?.throwIfAborted();
  await repairDispatch(d, report);
  return report;
}
