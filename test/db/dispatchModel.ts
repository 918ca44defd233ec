/**
 * A naive reference model of the tick, written straight from
 * docs/runner-pool.md ("The order: turns") and the tick contract: arrays,
 * sorting and scans, no counters kept apart from the lists. The model-based
 * test applies the same ops to it and to `rt_tick` and compares grants,
 * outcomes and positions after every tick.
 */

export interface ModelSession {
  id: string;
  taskId: string;
  userId: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
  epoch: number;
}

interface Line {
  queue: string[];
  head: number;
  join: number;
  running: Set<string>;
}

/** A placement request: a new queued session, in op order within its phase. */
export interface Placement {
  id: string;
  taskId: string;
  userId: string;
}

export class DispatchModel {
  readonly sessions = new Map<string, ModelSession>();
  /** task -> its attempts' ids, oldest first. */
  readonly attempts = new Map<string, string[]>();
  readonly lines = new Map<string, Line>();
  readonly overrides = new Map<string, number>();
  nextJoin = 0;

  constructor(
    public globalCap: number,
    public defaultCap: number,
  ) {}

  cap(userId: string): number {
    return this.overrides.get(userId) ?? this.defaultCap;
  }

  running(): number {
    let n = 0;
    for (const l of this.lines.values()) n += l.running.size;
    return n;
  }

  private line(userId: string): Line {
    let l = this.lines.get(userId);
    if (l === undefined) {
      l = { queue: [], head: 0, join: 0, running: new Set() };
      this.lines.set(userId, l);
    }
    return l;
  }

  private floor(): number {
    const heads = [...this.lines.values()].filter((l) => l.queue.length > 0).map((l) => l.head);
    return heads.length === 0 ? 0 : Math.min(...heads);
  }

  /** One phase's new sessions: at the head (requeues) or the back of each user's line. */
  place(rows: readonly Placement[], atHead: boolean): void {
    const floor = this.floor();
    const byUser = new Map<string, Placement[]>();
    for (const r of rows) byUser.set(r.userId, [...(byUser.get(r.userId) ?? []), r]);
    for (const [userId, mine] of byUser) {
      const l = this.line(userId);
      const ids = mine.map((r) => r.id);
      if (l.queue.length === 0) {
        l.head = floor;
        l.join = this.nextJoin++;
        l.queue = ids;
      } else if (atHead) {
        l.head -= ids.length;
        l.queue = [...ids, ...l.queue];
      } else {
        l.queue.push(...ids);
      }
      for (const r of mine) {
        this.sessions.set(r.id, { ...r, status: 'queued', epoch: 0 });
        this.attempts.set(r.taskId, [...(this.attempts.get(r.taskId) ?? []), r.id]);
      }
    }
  }

  /** running -> final (finish) or queued | running -> cancelled. */
  end(sessionId: string, to: ModelSession['status']): void {
    const s = this.sessions.get(sessionId);
    if (s === undefined) throw new Error(`model: no ${sessionId}`);
    const l = this.line(s.userId);
    l.running.delete(sessionId);
    const i = l.queue.indexOf(sessionId);
    if (i >= 0) l.queue.splice(i, 1);
    s.status = to;
  }

  /** Grants in order: the eligible user with the smallest head key, their first session. */
  grant(want: number): string[] {
    const out: string[] = [];
    while (out.length < want && this.running() < this.globalCap) {
      let best: [string, Line] | undefined;
      for (const [userId, l] of this.lines) {
        if (l.queue.length === 0 || l.running.size >= this.cap(userId)) continue;
        if (
          best === undefined ||
          l.head < best[1].head ||
          (l.head === best[1].head && l.join < best[1].join)
        )
          best = [userId, l];
      }
      if (best === undefined) break;
      const [, l] = best;
      const id = l.queue.shift() as string;
      l.head += 1;
      l.running.add(id);
      const s = this.sessions.get(id) as ModelSession;
      s.status = 'running';
      s.epoch += 1;
      out.push(id);
    }
    return out;
  }

  /** Every queued session in priority order (turn, join). */
  order(): string[] {
    const keyed: { id: string; turn: number; join: number }[] = [];
    for (const l of this.lines.values()) {
      for (const [i, id] of l.queue.entries()) keyed.push({ id, turn: l.head + i, join: l.join });
    }
    keyed.sort((a, b) => a.turn - b.turn || a.join - b.join);
    return keyed.map((k) => k.id);
  }

  /** 0 running, 1-based place queued, null otherwise. */
  position(sessionId: string, order = this.order()): number | null {
    const s = this.sessions.get(sessionId);
    if (s?.status === 'running') return 0;
    if (s?.status !== 'queued') return null;
    return order.indexOf(sessionId) + 1;
  }

  latest(taskId: string): ModelSession | undefined {
    const ids = this.attempts.get(taskId);
    return ids === undefined ? undefined : this.sessions.get(ids[ids.length - 1] as string);
  }
}
