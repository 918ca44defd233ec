/**
 * A naive reference model of the pool, written straight from the definitions
 * in docs/runner-pool.md: arrays, sorting and full scans, no heap, no tree.
 * The model-based test compares the real index with it after every command.
 */
import type { Grant, PoolRow } from '../../src/machines/poolIndex.js';

interface ModelUser {
  queue: string[];
  headTag: number;
  joinSeq: number;
  active: Set<string>;
}

export class PoolModel {
  readonly users = new Map<string, ModelUser>();
  readonly owner = new Map<string, string>();
  readonly overrides = new Map<string, number>();
  nextJoin = 0;

  constructor(
    public globalMax: number,
    public perUserMax: number,
  ) {}

  cap(userId: string): number {
    return this.overrides.get(userId) ?? this.perUserMax;
  }

  running(): number {
    let n = 0;
    for (const u of this.users.values()) n += u.active.size;
    return n;
  }

  private user(id: string): ModelUser {
    let u = this.users.get(id);
    if (!u) {
      u = { queue: [], headTag: 0, joinSeq: 0, active: new Set() };
      this.users.set(id, u);
    }
    return u;
  }

  /** The earliest turn any queued session waits for (0 when nobody waits). */
  private earliestTurn(): number {
    const heads = [...this.users.values()].filter((u) => u.queue.length > 0).map((u) => u.headTag);
    return heads.length === 0 ? 0 : Math.min(...heads);
  }

  private append(userId: string, sessionId: string): void {
    const u = this.user(userId);
    if (u.queue.length === 0) {
      u.headTag = this.earliestTurn();
      u.joinSeq = this.nextJoin++;
    }
    u.queue.push(sessionId);
    this.owner.set(sessionId, userId);
  }

  /** Every queued session in priority order: by (turn, joinSeq). */
  priorityOrder(): string[] {
    const keyed: { id: string; tag: number; join: number }[] = [];
    for (const u of this.users.values()) {
      for (const [i, id] of u.queue.entries())
        keyed.push({ id, tag: u.headTag + i, join: u.joinSeq });
    }
    keyed.sort((a, b) => a.tag - b.tag || a.join - b.join);
    return keyed.map((k) => k.id);
  }

  position(sessionId: string): number | null {
    const userId = this.owner.get(sessionId);
    if (userId === undefined) return null;
    if (this.users.get(userId)?.active.has(sessionId)) return 0;
    return this.priorityOrder().indexOf(sessionId) + 1;
  }

  dispatch(): Grant[] {
    const grants: Grant[] = [];
    for (;;) {
      if (this.running() >= this.globalMax) break;
      // The first session in priority order whose user is under their cap.
      const next = this.priorityOrder().find((id) => {
        const userId = this.owner.get(id) as string;
        return (this.users.get(userId) as ModelUser).active.size < this.cap(userId);
      });
      if (next === undefined) break;
      const userId = this.owner.get(next) as string;
      const u = this.users.get(userId) as ModelUser;
      if (u.queue[0] !== next) throw new Error('model: a user must be served in FIFO order');
      u.queue.shift();
      u.headTag += 1;
      u.active.add(next);
      grants.push({ sessionId: next, userId });
    }
    return grants;
  }

  enqueue(userId: string, sessionId: string): { position: number; grants: Grant[] } {
    if (!this.owner.has(sessionId)) this.append(userId, sessionId);
    const grants = this.dispatch();
    return { position: this.position(sessionId) ?? 0, grants };
  }

  private drop(sessionId: string): void {
    const userId = this.owner.get(sessionId);
    if (userId === undefined) return;
    const u = this.users.get(userId) as ModelUser;
    u.active.delete(sessionId);
    const i = u.queue.indexOf(sessionId);
    if (i >= 0) u.queue.splice(i, 1);
    this.owner.delete(sessionId);
  }

  release(sessionId: string): Grant[] {
    this.drop(sessionId);
    return this.dispatch();
  }

  /** An adopted run takes a slot whatever the caps; it leaves the line if it was in it. */
  hold(userId: string, sessionId: string): void {
    this.drop(sessionId);
    this.user(userId).active.add(sessionId);
    this.owner.set(sessionId, userId);
  }

  setUserCap(userId: string, max: number | null): Grant[] {
    if (max === null) this.overrides.delete(userId);
    else this.overrides.set(userId, max);
    return this.dispatch();
  }

  setGlobalMax(max: number): Grant[] {
    this.globalMax = max;
    return this.dispatch();
  }

  rebuild(rows: { queued: readonly PoolRow[]; running: readonly PoolRow[] }): Grant[] {
    const queued = new Map(rows.queued.map((r) => [r.sessionId, r]));
    const running = new Map(rows.running.map((r) => [r.sessionId, r]));
    for (const [id, userId] of [...this.owner]) {
      const isRunning = this.users.get(userId)?.active.has(id) ?? false;
      const row = (isRunning ? running : queued).get(id);
      if (row !== undefined && row.userId === userId) (isRunning ? running : queued).delete(id);
      else this.drop(id);
    }
    for (const r of running.values()) {
      this.user(r.userId).active.add(r.sessionId);
      this.owner.set(r.sessionId, r.userId);
    }
    const arrivals = [...queued.values()].sort(
      (a, b) => a.since - b.since || (a.sessionId < b.sessionId ? -1 : 1),
    );
    for (const r of arrivals) this.append(r.userId, r.sessionId);
    return this.dispatch();
  }
}
