/**
 * Replays a dispatch history (`session_history` in (tick, phase) order:
 * ticks are serial, so that is the order the database decided in) and
 * checks the dispatch engine's promises at every step, not by sampling:
 *
 * - caps: sessions running at once never above the global cap, nor a
 *   user's running above their cap;
 * - fairness: a newcomer (a user with nothing queued or running when its
 *   session was queued) waits at most one grant per other user before its
 *   own grant (docs/runner-pool.md), whichever node granted what. Grants of
 *   the tick that granted the newcomer do not count: a tick decides its
 *   grants together, in key order, but writes their history rows in no
 *   particular order. The newcomer is the user, not the session whose row
 *   came first: sessions of one user queued in one tick (the Reconciler's
 *   re-queue of a dead node's runs) take their places in the user's line by
 *   its own key, and the user's first grant is the one that ends the wait.
 *   The documented exception (docs/runner-pool.md): a run the
 *   infrastructure ended goes back to the head of its user's line, so the
 *   grant of a re-queued attempt (queued `requeued after <id>`, when the
 *   history gives reasons) does not count against anyone's wait.
 */

import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';

/**
 * Every transition of the store in the order the database decided it:
 * by tick (serial), and within a tick by phase (finishes and cancels
 * before the grants they make room for). Writes outside ticks (adoptions)
 * come last; the replay ignores them (they change no count).
 */
export async function readDispatchHistory(db: Kysely<Database>): Promise<ReplayEvent[]> {
  const rows = await db
    .selectFrom('session_history')
    .select(['session_id', 'user_id', 'from_status', 'to_status', 'tick'])
    .orderBy(
      (eb) => eb.ref('tick'),
      (ob) => ob.asc().nullsLast(),
    )
    .orderBy('phase')
    .orderBy('id')
    .execute();
  return rows.map((e) => ({
    sessionId: e.session_id,
    userId: e.user_id,
    from: e.from_status,
    to: e.to_status,
    tick: e.tick === null ? null : Number(e.tick),
  }));
}

/**
 * Sorts one store's `SessionEvent`s into the order the database decided
 * them: by tick, then phase; writes outside ticks last.
 */
export function decisionOrder(
  a: { tick: number | null; phase: number | null; id: string },
  b: { tick: number | null; phase: number | null; id: string },
): number {
  const big = Number.MAX_SAFE_INTEGER;
  return (
    (a.tick ?? big) - (b.tick ?? big) ||
    (a.phase ?? big) - (b.phase ?? big) ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

export interface ReplayEvent {
  sessionId: string;
  userId: string;
  from: string | null;
  to: string;
  /** The tick that wrote the event (null outside ticks). */
  tick: number | null;
  /** Why, when the history says (`requeued after <id>` for a re-queued attempt). */
  reason?: string | null;
}

export interface ReplayReport {
  grants: number;
  maxRunning: number;
  maxRunningByUser: Map<string, number>;
  /** Newcomers checked, and the worst number of grants one other user got while a newcomer waited. */
  newcomers: number;
  worstLag: number;
  violations: string[];
}

export function replayDispatch(
  events: readonly ReplayEvent[],
  caps: { globalCap: number; userCap: (userId: string) => number },
): ReplayReport {
  let running = 0;
  const runningBy = new Map<string, number>();
  const queuedBy = new Map<string, number>();
  const report: ReplayReport = {
    grants: 0,
    maxRunning: 0,
    maxRunningByUser: new Map(),
    newcomers: 0,
    worstLag: 0,
    violations: [],
  };
  /** A waiting newcomer (a user) -> the tick of its first grant, and grants each other user got since it joined. */
  const waiting = new Map<string, { grantTick: number | null; lag: Map<string, number> }>();
  const add = (m: Map<string, number>, k: string, d: number) => m.set(k, (m.get(k) ?? 0) + d);
  /** For each event, the tick of its user's next grant at or after it. */
  const nextGrantTick: Array<number | null> = new Array(events.length).fill(null);
  const latest = new Map<string, number | null>();
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.from === 'queued' && e.to === 'running') latest.set(e.userId, e.tick);
    nextGrantTick[i] = latest.get(e.userId) ?? null;
  }
  /** Attempts re-queued at the head of their user's line. */
  const requeued = new Set<string>();
  for (const [i, e] of events.entries()) {
    if (e.to === 'queued' && e.from === null) {
      if (e.reason?.startsWith('requeued after ') === true) requeued.add(e.sessionId);
      if ((queuedBy.get(e.userId) ?? 0) === 0 && (runningBy.get(e.userId) ?? 0) === 0) {
        waiting.set(e.userId, { grantTick: nextGrantTick[i] ?? null, lag: new Map() });
        report.newcomers += 1;
      }
      add(queuedBy, e.userId, 1);
    } else if (e.from === 'queued' && e.to === 'running') {
      report.grants += 1;
      add(queuedBy, e.userId, -1);
      add(runningBy, e.userId, 1);
      running += 1;
      const mine = runningBy.get(e.userId) ?? 0;
      report.maxRunning = Math.max(report.maxRunning, running);
      report.maxRunningByUser.set(
        e.userId,
        Math.max(report.maxRunningByUser.get(e.userId) ?? 0, mine),
      );
      if (running > caps.globalCap)
        report.violations.push(`${running} running > global cap ${caps.globalCap}`);
      if (mine > caps.userCap(e.userId))
        report.violations.push(`${e.userId} runs ${mine} > cap ${caps.userCap(e.userId)}`);
      const own = waiting.get(e.userId);
      waiting.delete(e.userId);
      if (own !== undefined) {
        const worst = Math.max(0, ...own.lag.values());
        report.worstLag = Math.max(report.worstLag, worst);
        if (worst > 1)
          report.violations.push(`newcomer ${e.sessionId} waited ${worst} grants of one user`);
      }
      if (requeued.has(e.sessionId)) continue;
      for (const w of waiting.values()) {
        const same = e.tick !== null && w.grantTick === e.tick;
        if (!same) add(w.lag, e.userId, 1);
      }
    } else if (e.from === 'queued') {
      add(queuedBy, e.userId, -1);
      // Cancelled before its turn: nothing of the user's waits any more.
      if ((queuedBy.get(e.userId) ?? 0) === 0) waiting.delete(e.userId);
    } else if (e.from === 'running' && e.to !== 'running') {
      add(runningBy, e.userId, -1);
      running -= 1;
    }
  }
  return report;
}
