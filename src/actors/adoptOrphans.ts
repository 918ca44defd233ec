/**
 * The Reconciler's step 2: running sessions whose owner is gone, adopted or
 * failed and re-queued, in batches (see `adoptOrphans`).
 */

import { MIN_TIME_LIMIT_MS } from '../board/timeLimit.js';
import { adoptMany, listRunning, type Session } from '../db/index.js';
import { recoveryAction, recoveryFailReason } from '../machines/recoveryPolicy.js';
import { eachLimited } from './eachLimited.js';
import { inWaves } from './inWaves.js';
import { OverdueRunTakenNotice, overdueRuns } from './overdueRuns.js';
import { emptyReport, type PassReport, type ReconcilerDeps, recover } from './reconcilerDeps.js';
import { overdue } from './runTimeLimit.js';
import { findUnrecorded, type UnrecordedRun } from './unrecordedRun.js';

/**
 * Step 2: running sessions whose owner is gone. An owner is gone when it is
 * another boot that the liveness port does not vouch for, or this boot with
 * no TaskRunner for the session (its runner supervisor gave up on it).
 * `recoveryAction` decides: adopt or fail and re-queue. A row with no
 * handle is looked for by name first (`findUnrecorded`): a run that began is
 * adopted with its handle recorded by the fence, a container with nothing
 * begun in it removed before the re-queue.
 *
 * Adoption is batched: the decisions (one liveness judgement per owner, one
 * observation per run, ORPHAN_CONCURRENCY at a time) come first; then the
 * runs to adopt are fenced ADOPT_BATCH per statement (`adoptMany`: each row
 * a compare-and-set on its epoch, so a row that moved on is left alone),
 * their owners judged again just before, so only the dead are adopted; and
 * each fenced run gets its TaskRunner, which starts from the fenced row with
 * no read or write of its own. A node's two hundred runs cost two
 * statements, not a thousand.
 *
 * A live owner's run past its time limit by more than `deps.overdueGraceMs`
 * (src/actors/runTimeLimit.ts `overdueGraceMs`) is adopted too, where the backend can adopt
 * it and its container is there: its owner does not enforce the limit (a
 * node of a version before time limits, in a rolling deploy), so this boot
 * fences it, the owner's heartbeat sweep stops its runner (`fencedOut`),
 * and the runner started here finds the limit past and times the run out
 * with its output. Only runs old enough to be overdue under the smallest
 * limit have their limits read: one statement, and none while every run is
 * younger than that.
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
  // Live owners' runs old enough to be past a limit (`late`), and of those
  // the ones adopted because they are (`overdueIds`: their ids and limits).
  const late: number[] = [];
  const overdueIds = new Map<string, number>();
  // Runs found by name for rows with no handle, by row index: their fence records the handle.
  const found = new Map<number, UnrecordedRun>();
  // The fail-and-re-queue writes are not awaited row by row: they wait in
  // the dispatcher's outbox together, so a dead node's thousand runs ride
  // a few ticks of up to 500 ops, not sixteen of 64 (the decisions, which
  // observe the backend, stay ORPHAN_CONCURRENCY at a time). One wave of
  // them is out at a time: a tick sent while another is out asks for no
  // room (the first asked for it all), so its finishes would free slots
  // that only a third tick grants. In waves, every tick of them grants its
  // own freed slots (recovery bench: 1,000 runs in 3 ticks, not 5).
  const wave = inWaves(RECOVER_WAVE);
  const writes: Promise<void>[] = [];
  const decided = eachLimited(rows, ORPHAN_CONCURRENCY, async (s, i) => {
    deps.signal?.throwIfAborted();
    // A runner here protects only a row this boot owns: one for a row
    // another boot owns was fenced out by that boot's adoption (this boot
    // lost its lock meanwhile), and must not keep the row from recovery
    // when that owner dies in turn (its fenced row replaces the runner).
    if (s.owner === deps.owner && (live.has(s.id) || startingHere(deps, s, startedAt))) return;
    if (!(await gone(s.owner))) {
      const grace = deps.overdueGraceMs;
      if (grace !== undefined && overdue(s.claimedAt, MIN_TIME_LIMIT_MS, startedAt, grace))
        late.push(i);
      return;
    }
    // A row with no handle may still have a run going: its owner died
    // between start and the handle's write. Looked for by name, never re-queued blind.
    const unrecorded = s.handle === null ? await findUnrecorded(deps.backend, s.id) : undefined;
    const handle = s.handle ?? unrecorded?.handle ?? null;
    const presence =
      unrecorded?.presence ??
      (handle === null
        ? 'absent'
        : (await deps.backend.observe({ sessionId: s.id, handle })).presence);
    const action = recoveryAction({
      backend: s.backend ?? deps.backend.kind,
      kind: s.kind,
      handle,
      presence,
      unobservableForMs: unobservableFor(deps, s.id, presence),
      ...(unrecorded?.begun === undefined ? {} : { begun: unrecorded.begun }),
    });
    if (action === 'wait') return;
    if (action === 'adopt' && deps.backend.adoptable) {
      if (unrecorded !== undefined) found.set(i, unrecorded);
      toAdopt.push(i);
    } else if (action === 'discard' && handle !== null)
      writes.push(
        wave(() => discard(deps, s, handle)).then((ok) => {
          if (ok) done[i] = 'failed';
        }),
      );
    else
      writes.push(
        wave(() => recover(deps, s, recoveryFailReason(presence))).then((ok) => {
          if (ok) done[i] = 'failed';
        }),
      );
  });
  // Every write settles before the pass goes on (or fails), even when a decision failed.
  const [decisions] = await Promise.allSettled([decided]);
  const written = await Promise.allSettled(writes);
  const firstError = [decisions, ...written].find((r) => r?.status === 'rejected');
  if (firstError?.status === 'rejected') throw firstError.reason;
  for (const [i, limitMs] of await overdueRuns(deps, rows, late, startedAt)) {
    toAdopt.push(i);
    overdueIds.set((rows[i] as Session).id, limitMs);
  }
  for (let from = 0; from < toAdopt.length; from += ADOPT_BATCH) {
    deps.signal?.throwIfAborted();
    const batch = toAdopt.slice(from, from + ADOPT_BATCH);
    for (const i of await fenceOrphans(
      deps,
      batch.map((i) => rows[i] as Session),
      batch.map((i) => found.get(i)),
      overdueIds,
    ))
      done[batch[i] as number] = 'adopted';
  }
  rows.forEach((s, i) => {
    if (done[i] === undefined) return;
    report[done[i]].push(s.id);
    const limitMs = overdueIds.get(s.id);
    if (limitMs === undefined) return;
    report.overdue.push(s.id);
    deps.onError(new OverdueRunTakenNotice(s.id, s.owner, limitMs, deps.overdueGraceMs ?? 0));
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
 * fresh: an owner that came back since the decisions keeps its runs, unless
 * the run is overdue (`overdueIds`), which is taken from a live owner.
 */
async function fenceOrphans(
  deps: ReconcilerDeps,
  orphans: Session[],
  unrecorded: ReadonlyArray<UnrecordedRun | undefined>,
  overdueIds: ReadonlyMap<string, number>,
): Promise<number[]> {
  const gone = ownersGone(deps);
  const dead = await Promise.all(orphans.map((s) => (overdueIds.has(s.id) ? true : gone(s.owner))));
  const want = orphans.flatMap((s, i) => (dead[i] ? [{ s, found: unrecorded[i] }] : []));
  if (want.length === 0) return [];
  deps.signal?.throwIfAborted();
  const { adopted, limits } = await adoptMany(deps.db, {
    sessions: want.map(({ s, found }) => ({
      sessionId: s.id,
      epoch: s.epoch,
      ...(found?.handle
        ? {
            found: {
              backend: deps.backend.kind,
              handle: found.handle,
              startedAt: found.containerStartedAt,
            },
          }
        : {}),
    })),
    owner: deps.owner,
    now: new Date(deps.now()),
  });
  const fenced = new Map(adopted.map((s) => [s.id, s]));
  await eachLimited(adopted, ORPHAN_CONCURRENCY, (s) =>
    deps.runAdopted(s, limits.get(s.id) ?? null),
  );
  return orphans.flatMap((s, i) => (fenced.has(s.id) ? [i] : []));
}

/**
 * Removes a handle-less run's container in which the command never began,
 * then fails and re-queues the row: the next attempt is then the only run.
 * A removal the engine refuses leaves the row for the next pass, never
 * re-queued beside a container that might still run something.
 */
async function discard(deps: ReconcilerDeps, s: Session, handle: string): Promise<boolean> {
  try {
    await deps.backend.remove({ sessionId: s.id, handle });
  } catch (error) {
    deps.onError(error);
    return false;
  }
  return recover(deps, s, 'owner_lost: its run never began');
}

/** Orphans handled at once by one pass. */
const ORPHAN_CONCURRENCY = 64;
/** Fail-and-re-queue writes out at once: one tick's worth (the runtime's maxOpsPerTick). */
const RECOVER_WAVE = 500;
/** Orphans fenced by one statement. */
export const ADOPT_BATCH = 250;
