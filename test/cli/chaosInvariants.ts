/**
 * What a chaos run on several real nodes must leave in the rows, checked
 * after the fact from the whole history: nothing lost, nothing run twice,
 * caps never exceeded at any instant (the dispatch replay), and every orphan
 * handled within the bound after its owner's death. Pure: the test reads the
 * rows and the kill times, this says what is wrong.
 */
import { type ReplayEvent, replayDispatch } from '../support/dispatchReplay.js';

export interface ChaosSession {
  id: string;
  taskId: string;
  attempt: number;
  status: string;
  failureReason: string | null;
}

export interface ChaosEvent {
  sessionId: string;
  userId: string;
  from: string | null;
  to: string;
  reason: string | null;
  /** The owner the event names (the grantee of a grant, the owner of a finish). */
  node: string | null;
  atMs: number;
  tick: number | null;
}

export interface ChaosFacts {
  taskIds: readonly string[];
  sessions: readonly ChaosSession[];
  /** Every history row, in id order. */
  events: readonly ChaosEvent[];
  /** A succeeded session's stored output, by session. */
  outputs: ReadonlyMap<string, string>;
  /** What each task's command prints when it runs once. */
  expectedOutput: ReadonlyMap<string, string>;
  /** When the test SIGKILLed each boot (`node@boot`); a boot not in it was never killed. */
  killedAt: ReadonlyMap<string, number>;
  /**
   * From when the bound counts for a killed boot: its kill, or, when no other
   * node was watching then, the moment one started watching (its boot sweep).
   * Absent: the kill.
   */
  watchedFrom?: ReadonlyMap<string, number>;
  caps: { globalCap: number; userCap: number };
  /** Kill → the orphan's failure, at most. */
  boundMs: number;
}

export interface ChaosReport {
  violations: string[];
  /** Orphans failed and re-queued, and the slowest one's lag after its owner's kill. */
  orphans: number;
  worstLagMs: number;
  grants: number;
  maxRunning: number;
}

/**
 * @example
 * ```ts
 * const ev = (from, to, node, atMs) => ({ sessionId: 's1', userId: 'u', from, to, reason: null, node, atMs, tick: atMs });
 * const events = [ev(null, 'queued', null, 0), ev('queued', 'running', 'a@1', 1), ev('running', 'succeeded', 'a@1', 2)];
 * const s1 = { id: 's1', taskId: 't1', attempt: 1, status: 'succeeded', failureReason: null };
 * const f = { taskIds: ['t1'], sessions: [s1], events, outputs: new Map([['s1', 'hi']]), expectedOutput: new Map([['t1', 'hi']]), killedAt: new Map(), caps: { globalCap: 1, userCap: 1 }, boundMs: 2000 };
 * checkChaos(f).violations // => []
 * checkChaos({ ...f, outputs: new Map() }).violations // => ['s1: output is not the command\'s, once: undefined']
 * ```
 */
export function checkChaos(f: ChaosFacts): ChaosReport {
  const violations: string[] = [];
  const byTask = new Map<string, ChaosSession[]>();
  for (const s of f.sessions) byTask.set(s.taskId, [...(byTask.get(s.taskId) ?? []), s]);
  // Nothing lost: each task's last attempt succeeded, once, the earlier ones were the infrastructure's.
  for (const taskId of f.taskIds) {
    const attempts = (byTask.get(taskId) ?? []).sort((a, b) => a.attempt - b.attempt);
    const last = attempts.at(-1);
    if (last?.status !== 'succeeded') {
      violations.push(`${taskId}: last attempt ${last?.attempt} is ${last?.status ?? 'missing'}`);
      continue;
    }
    for (const s of attempts.slice(0, -1))
      if (s.status !== 'failed' || s.failureReason !== 'owner_lost')
        violations.push(`${s.id}: attempt ${s.attempt} ${s.status} (${s.failureReason})`);
    const out = f.outputs.get(last.id);
    if (out !== f.expectedOutput.get(taskId))
      violations.push(`${last.id}: output is not the command's, once: ${JSON.stringify(out)}`);
  }

  const grantOf = new Map<string, ChaosEvent>();
  let orphans = 0;
  let worstLagMs = 0;
  for (const e of f.events) {
    if (e.from === 'queued' && e.to === 'running') {
      // Run once: one grant per session, never an adoption (a simulated run dies with its node).
      if (grantOf.has(e.sessionId)) violations.push(`${e.sessionId}: granted twice`);
      grantOf.set(e.sessionId, e);
    } else if (e.from === 'running' && e.to === 'running') {
      violations.push(`${e.sessionId}: adopted by ${e.node}, but its run died with its owner`);
    } else if (e.from === 'running' && e.to === 'failed') {
      const owner = grantOf.get(e.sessionId)?.node ?? null;
      const killed = owner === null ? undefined : f.killedAt.get(owner);
      if (killed === undefined || e.atMs < killed) {
        // Taken from a live owner: its run went on, and the re-queued attempt is a second one.
        violations.push(`${e.sessionId}: failed (${e.reason}) while its owner ${owner} lived`);
        continue;
      }
      orphans += 1;
      const lag = e.atMs - Math.max(killed, f.watchedFrom?.get(owner ?? '') ?? killed);
      worstLagMs = Math.max(worstLagMs, lag);
      if (lag > f.boundMs)
        violations.push(
          `${e.sessionId}: orphan of ${owner} handled ${lag} ms after it could be seen dead`,
        );
    }
  }

  const replay = replayDispatch(
    f.events.map(
      (e): ReplayEvent => ({
        sessionId: e.sessionId,
        userId: e.userId,
        from: e.from,
        to: e.to,
        tick: e.tick,
        reason: e.reason,
      }),
    ),
    { globalCap: f.caps.globalCap, userCap: () => f.caps.userCap },
  );
  violations.push(...replay.violations);
  return {
    violations,
    orphans,
    worstLagMs,
    grants: replay.grants,
    maxRunning: replay.maxRunning,
  };
}
