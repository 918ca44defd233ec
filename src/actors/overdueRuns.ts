/**
 * The Reconciler's backstop for time limits (step 2, adoptOrphans.ts): a
 * live owner's run past its limit by more than the grace (`overdueGraceMs`:
 * the owner's own output read and finish deadlines) is one its owner does
 * not time out. In a rolling deploy that is a node of a version
 * before time limits, granted a task a newer node accepted with one; it
 * would hold its user's slot for as long as the agent hangs. Such a run is
 * adopted like a dead owner's: this boot fences it, the owner's heartbeat
 * sweep stops its runner there (`fencedOut`) and leaves the container, and
 * the runner started here finds the limit past and times the run out with
 * its output (src/actors/runTimeLimit.ts).
 */
import { formatTimeLimit } from '../board/formatTimeLimit.js';
import type { Session } from '../db/index.js';
import { timeLimitsOf } from '../db/timeLimit.js';
import { eachLimited } from './eachLimited.js';
import type { ReconcilerDeps } from './reconcilerDeps.js';
import { overdue } from './runTimeLimit.js';

/** A live owner's run was taken past its time limit, to time it out here: for the logs. */
export class OverdueRunTakenNotice extends Error {
  override readonly name = 'OverdueRunTakenNotice';
  readonly code = 'OVERDUE_RUN_TAKEN';
  constructor(
    readonly sessionId: string,
    readonly owner: string | null,
    readonly limitMs: number,
    readonly graceMs: number,
  ) {
    super(
      `${sessionId}: still running on ${owner ?? '(no owner)'} more than ${formatTimeLimit(graceMs)} past its time limit (${formatTimeLimit(limitMs)}): that node does not time it out (a version before time limits?); taken to time it out here`,
    );
  }
}

/**
 * Of the live owners' runs at `late` (indexes into `rows`, each old enough
 * to be past the smallest limit), those past their own limit by more than
 * the grace whose containers this boot can adopt: their limits in one read,
 * then one observation each. A run whose container is not there is left to
 * its owner, which is alive and finds that out itself; so is every run on a
 * backend that cannot adopt, and a run with no handle (still starting).
 * Their indexes, with their limits.
 */
export async function overdueRuns(
  deps: ReconcilerDeps,
  rows: readonly Session[],
  late: readonly number[],
  now: number,
): Promise<Map<number, number>> {
  const taken = new Map<number, number>();
  const grace = deps.overdueGraceMs;
  if (late.length === 0 || !deps.backend.adoptable || grace === undefined) return taken;
  deps.signal?.throwIfAborted();
  const limits = await timeLimitsOf(
    deps.db,
    late.map((i) => (rows[i] as Session).id),
  );
  const past = late.filter((i) => {
    const s = rows[i] as Session;
    const ms = limits.get(s.id);
    return ms !== undefined && s.handle !== null && overdue(s.claimedAt, ms, now, grace);
  });
  await eachLimited(past, OBSERVE_CONCURRENCY, async (i) => {
    deps.signal?.throwIfAborted();
    const s = rows[i] as Session;
    const seen = await deps.backend.observe({ sessionId: s.id, handle: s.handle as string });
    if (seen.presence === 'present') taken.set(i, limits.get(s.id) as number);
  });
  return new Map([...taken].sort((a, b) => a[0] - b[0]));
}

/** Observations out at once (adoptOrphans' ORPHAN_CONCURRENCY). */
const OBSERVE_CONCURRENCY = 64;
