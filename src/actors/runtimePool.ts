/**
 * The slot pool the runtime drives: "asked for a runner" (queued, with a
 * position) and "holds a runner" (running) kept apart, caps applied, grants
 * sent to the waiting TaskRunner as `{ type: 'runner_slot', sessionId }`.
 *
 * This is the runtime's adapter port, with a small FIFO implementation of
 * its own so the runtime works before (and independently of) the fair
 * RunnerPool of src/actors/runnerPool.ts; that one can be put behind this
 * same interface. The pool is a cache: `rebuild` replaces it from the rows,
 * and the database decides every claim (claimWithinCaps), so a stale pool
 * can only delay a grant, never exceed a cap.
 */
import { type DownEvent, demonitor, type MonitorRef, monitor } from '../supervisor/monitor.js';
import type { Watchable } from '../supervisor/watchExit.js';
import type { RuntimeCaps, RuntimePoolSnapshot } from './runtimeTypes.js';

/** The grant a waiter receives. */
export interface RunnerSlotEvent {
  type: 'runner_slot';
  sessionId: string;
}

/** Anything that can receive a grant and be monitored (a TaskRunner actor). */
export type SlotWaiter = Watchable & { send(event: RunnerSlotEvent): void };

/** What the runtime asks of a pool. */
export interface SlotPool {
  /** Joins the line (or keeps its place when already in it); returns the 1-based position. */
  enqueue(userId: string, sessionId: string, waiter: SlotWaiter): number;
  /** Counts a session as holding a runner without a grant (an adopted run). */
  hold(userId: string, sessionId: string, waiter: SlotWaiter): void;
  /** Leaves the line or gives the runner back. Idempotent. */
  release(sessionId: string): void;
  /** Replaces the index with the rows' truth (the Reconciler's step 4). */
  rebuild(rows: { queued: readonly PoolRow[]; running: readonly PoolRow[] }): void;
  setUserCap(userId: string, maxRunning: number | null): void;
  /** 1-based position of a queued session in this pool's line, or null. */
  position(sessionId: string): number | null;
  snapshot(): RuntimePoolSnapshot;
  /** Sessions currently counted as holding a runner. */
  holders(): string[];
  /** Waits that ended (grant) since the last call, in seconds. */
  drainWaitSamples(): number[];
  /** Forgets every waiter and monitor (the pool's owner is stopping). */
  close(): void;
}

export interface PoolRow {
  sessionId: string;
  userId: string;
}

interface Entry {
  userId: string;
  sessionId: string;
  waiter: SlotWaiter | undefined;
  monitorRef: MonitorRef | undefined;
  since: number;
}

/**
 * A FIFO pool over the caps. Grants go out on a microtask after any change,
 * so a grant never re-enters the caller that caused it.
 */
export function createSlotPool(caps: RuntimeCaps, now: () => number): SlotPool {
  const queue: Entry[] = [];
  const running = new Map<string, Entry>();
  const userCaps = new Map<string, number>();
  let waitSamples: number[] = [];
  let scheduled = false;
  let closed = false;

  const capOf = (userId: string) => userCaps.get(userId) ?? caps.defaultUserCap;
  const runningOf = (userId: string) => {
    let n = 0;
    for (const e of running.values()) if (e.userId === userId) n += 1;
    return n;
  };

  const watch = (entry: Entry) => {
    if (entry.waiter === undefined) return;
    // A waiter that dies frees its place or its slot at once (DESIGN.md).
    entry.monitorRef = monitor((down: DownEvent) => {
      if (down.ref !== entry.monitorRef) return;
      entry.monitorRef = undefined;
      release(entry.sessionId);
    }, entry.waiter);
  };
  const unwatch = (entry: Entry) => {
    if (entry.monitorRef !== undefined) demonitor(entry.monitorRef, { flush: true });
    entry.monitorRef = undefined;
  };

  const dispatch = () => {
    scheduled = false;
    if (closed) return;
    for (let i = 0; i < queue.length && running.size < caps.maxRunning; ) {
      const entry = queue[i] as Entry;
      if (entry.waiter === undefined || runningOf(entry.userId) >= capOf(entry.userId)) {
        i += 1;
        continue;
      }
      queue.splice(i, 1);
      running.set(entry.sessionId, entry);
      waitSamples.push(Math.max(0, now() - entry.since) / 1000);
      entry.waiter.send({ type: 'runner_slot', sessionId: entry.sessionId });
    }
  };
  const schedule = () => {
    if (scheduled || closed) return;
    scheduled = true;
    queueMicrotask(dispatch);
  };

  function release(sessionId: string): void {
    const at = queue.findIndex((e) => e.sessionId === sessionId);
    if (at >= 0) unwatch(queue.splice(at, 1)[0] as Entry);
    const held = running.get(sessionId);
    if (held) {
      unwatch(held);
      running.delete(sessionId);
    }
    schedule();
  }

  return {
    enqueue(userId, sessionId, waiter) {
      const held = running.get(sessionId);
      if (held) {
        // Already granted (a restarted runner asking again): re-grant.
        unwatch(held);
        held.waiter = waiter;
        watch(held);
        queueMicrotask(() => waiter.send({ type: 'runner_slot', sessionId }));
        return 0;
      }
      let entry = queue.find((e) => e.sessionId === sessionId);
      if (entry) {
        unwatch(entry);
        entry.waiter = waiter;
      } else {
        entry = { userId, sessionId, waiter, monitorRef: undefined, since: now() };
        queue.push(entry);
      }
      watch(entry);
      schedule();
      return queue.indexOf(entry) + 1;
    },
    hold(userId, sessionId, waiter) {
      const at = queue.findIndex((e) => e.sessionId === sessionId);
      if (at >= 0) unwatch(queue.splice(at, 1)[0] as Entry);
      const prev = running.get(sessionId);
      if (prev) unwatch(prev);
      const entry: Entry = { userId, sessionId, waiter, monitorRef: undefined, since: now() };
      running.set(sessionId, entry);
      watch(entry);
    },
    release,
    rebuild(rows) {
      const queuedIds = new Set(rows.queued.map((r) => r.sessionId));
      const runningIds = new Set(rows.running.map((r) => r.sessionId));
      // Keep live waiters and holders that the rows confirm; rows no one waits
      // for yet get a placeholder so positions and counts are right.
      for (const [id, e] of running) {
        if (!runningIds.has(id)) {
          unwatch(e);
          running.delete(id);
        }
      }
      for (const r of rows.running) {
        if (!running.has(r.sessionId)) {
          running.set(r.sessionId, {
            ...r,
            waiter: undefined,
            monitorRef: undefined,
            since: now(),
          });
        }
      }
      const byId = new Map(queue.map((e) => [e.sessionId, e]));
      for (const e of queue) if (!queuedIds.has(e.sessionId)) unwatch(e);
      queue.length = 0;
      for (const r of rows.queued) {
        queue.push(
          byId.get(r.sessionId) ?? { ...r, waiter: undefined, monitorRef: undefined, since: now() },
        );
      }
      schedule();
    },
    setUserCap(userId, maxRunning) {
      if (maxRunning === null) userCaps.delete(userId);
      else userCaps.set(userId, maxRunning);
      schedule();
    },
    position(sessionId) {
      const at = queue.findIndex((e) => e.sessionId === sessionId);
      return at < 0 ? null : at + 1;
    },
    snapshot() {
      const users = new Map<string, { running: number; queued: number }>();
      const row = (u: string) => {
        let r = users.get(u);
        if (!r) {
          r = { running: 0, queued: 0 };
          users.set(u, r);
        }
        return r;
      };
      for (const e of running.values()) row(e.userId).running += 1;
      for (const e of queue) row(e.userId).queued += 1;
      return {
        maxRunning: caps.maxRunning,
        running: running.size,
        queued: queue.length,
        users: [...users]
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([userId, r]) => ({ userId, ...r, maxRunning: userCaps.get(userId) ?? null })),
      };
    },
    holders: () => [...running.keys()],
    drainWaitSamples() {
      const out = waitSamples;
      waitSamples = [];
      return out;
    },
    close() {
      closed = true;
      for (const e of queue) unwatch(e);
      for (const e of running.values()) unwatch(e);
    },
  };
}
