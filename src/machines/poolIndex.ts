/**
 * The RunnerPool's index: who holds a runner slot, who waits, and in what
 * order. It is only a fast copy of the queued and running session rows
 * (DESIGN.md rule 1), so it can always be rebuilt from them.
 *
 * Deterministic and free of I/O: no clock (every operation that may grant
 * takes `at`), no database, no actors. Mutable for speed, so the actor owns
 * exactly one instance and never shares it.
 *
 * The order (docs/runner-pool.md has the proofs): user u's queued sessions
 * sit in turns `headTag(u), headTag(u)+1, …`; a session's turn key is
 * `(turn, joinSeq(u))`, and the pool's priority order is the order of keys. A
 * user whose line was empty joins at the earliest turn still waiting, behind
 * the users already there. A grant always goes to the first session in that
 * order whose user is under their cap; a user at their cap keeps their place.
 */
import { EligibleHeap } from './eligibleHeap.js';
import { checkCap, type PoolCaps, resolvePoolCaps, userCap } from './poolCaps.js';
import { TurnOrder } from './turnOrder.js';

/** A session row as the pool reads it (queued: since enqueued; running: since granted). */
export interface PoolRow {
  readonly sessionId: string;
  readonly userId: string;
  readonly since: number;
}

/** A slot given to a session: the actor tells its waiter. */
export interface Grant {
  readonly sessionId: string;
  readonly userId: string;
}

/** What an enqueue answers: the session's position (0: it holds a slot) and every grant made. */
export interface EnqueueResult {
  readonly position: number;
  readonly grants: readonly Grant[];
}

/** A session id reused for another user, or the same session both queued and running in rows. */
export class PoolIndexError extends Error {
  override readonly name = 'PoolIndexError';
  constructor(
    readonly code: 'POOL_SESSION_USER_MISMATCH' | 'POOL_ROW_CONFLICT',
    message: string,
  ) {
    super(message);
  }
}

interface UserEntry {
  readonly id: string;
  queue: string[];
  /** Index in `queue` of the head; earlier cells are granted sessions. */
  head: number;
  headTag: number;
  joinSeq: number;
  readonly active: Set<string>;
  heapIndex: number;
}

interface SessionEntry {
  readonly userId: string;
  state: 'queued' | 'running';
  since: number;
  /** Index in the user's `queue` while queued. */
  slot: number;
}

const qlen = (u: UserEntry): number => u.queue.length - u.head;

/**
 * @example
 * ```ts
 * const pool = new PoolIndex({ globalMax: 2, perUserMax: 1 });
 * pool.enqueue('ann', 'a1', 0) // => { position: 0, grants: [{ sessionId: 'a1', userId: 'ann' }] }
 * // ann is at her cap: a2 waits, first in line
 * pool.enqueue('ann', 'a2', 1) // => { position: 1, grants: [] }
 * // a user at their cap never blocks the others
 * pool.enqueue('bob', 'b1', 2).position // => 0
 * pool.enqueue('cyd', 'c1', 3).position // => 2
 * pool.release('a1', 4) // => [{ sessionId: 'a2', userId: 'ann' }]
 * pool.positionOf('c1') // => 1
 * pool.release('b1', 5) // => [{ sessionId: 'c1', userId: 'cyd' }]
 * pool.positionOf('c1') // => 0
 * ```
 */
export class PoolIndex {
  private readonly users = new Map<string, UserEntry>();
  private readonly sessions = new Map<string, SessionEntry>();
  private readonly order = new TurnOrder();
  private readonly eligible = new EligibleHeap<UserEntry>();
  private readonly overrides: Map<string, number>;
  private globalMax: number;
  private perUserMax: number;
  private running = 0;
  private nextJoin = 0;

  constructor(caps: Partial<PoolCaps> = {}) {
    const c = resolvePoolCaps(caps);
    this.globalMax = c.globalMax;
    this.perUserMax = c.perUserMax;
    this.overrides = new Map(c.overrides);
  }

  /** The caps in force. */
  get caps(): PoolCaps {
    return {
      globalMax: this.globalMax,
      perUserMax: this.perUserMax,
      overrides: new Map(this.overrides),
    };
  }

  /** Sessions holding a slot. */
  get runningCount(): number {
    return this.running;
  }

  /** Sessions waiting for a slot. */
  get queuedCount(): number {
    return this.order.size;
  }

  /**
   * Puts a session in line and dispatches. Never refuses. Enqueueing a
   * session already known changes nothing and answers its position (a
   * restarted waiter re-enqueues). Throws `POOL_SESSION_USER_MISMATCH` when
   * the id is known under another user.
   */
  enqueue(userId: string, sessionId: string, at: number): EnqueueResult {
    const known = this.sessions.get(sessionId);
    if (known !== undefined) {
      if (known.userId !== userId) {
        throw new PoolIndexError(
          'POOL_SESSION_USER_MISMATCH',
          `session ${sessionId} belongs to ${known.userId}, not ${userId}`,
        );
      }
      return { position: this.positionOf(sessionId) ?? 0, grants: [] };
    }
    const u = this.user(userId);
    const ahead = this.append(u, sessionId, at);
    this.refresh(u);
    const grants = this.dispatch(at);
    // Without grants nothing moved since the insert answered its rank.
    if (grants.length === 0) return { position: ahead + 1, grants };
    return { position: this.positionOf(sessionId) ?? 0, grants };
  }

  /**
   * Forgets a session, queued or running (it finished, was cancelled, or its
   * waiter died), and dispatches into the room it leaves. Unknown: no-op.
   */
  release(sessionId: string, at: number): Grant[] {
    const s = this.sessions.get(sessionId);
    if (s === undefined) return [];
    const u = this.users.get(s.userId) as UserEntry;
    this.drop(u, sessionId, s);
    this.refresh(u);
    return this.dispatch(at);
  }

  /**
   * Counts a session as holding a slot without a grant: an adopted run, or a
   * run another node claimed. Caps are not checked (the run exists already);
   * a queued entry for it leaves the line.
   *
   * @example
   * ```ts
   * const pool = new PoolIndex({ globalMax: 1 });
   * pool.enqueue('ann', 'a1', 0).position // => 0
   * pool.hold('bob', 'b1', 1);
   * pool.runningCount // => 2
   * pool.positionOf('b1') // => 0
   * ```
   */
  hold(userId: string, sessionId: string, at: number): void {
    const s = this.sessions.get(sessionId);
    if (s?.state === 'running' && s.userId === userId) return;
    if (s !== undefined) {
      const old = this.users.get(s.userId) as UserEntry;
      this.drop(old, sessionId, s);
      this.refresh(old);
    }
    const u = this.user(userId);
    u.active.add(sessionId);
    this.sessions.set(sessionId, { userId, state: 'running', since: at, slot: -1 });
    this.running += 1;
    this.refresh(u);
  }

  /** Sets (`null`: removes) a user's override. Lowering never revokes a slot. */
  setUserCap(userId: string, max: number | null, at: number): Grant[] {
    if (max === null) this.overrides.delete(userId);
    else this.overrides.set(userId, checkCap(`overrides.${userId}`, max));
    const u = this.users.get(userId);
    if (u !== undefined) this.refresh(u);
    return this.dispatch(at);
  }

  /** Changes the global cap or the default per-user cap. */
  setDefaults(caps: { globalMax?: number; perUserMax?: number }, at: number): Grant[] {
    if (caps.globalMax !== undefined) this.globalMax = checkCap('globalMax', caps.globalMax);
    if (caps.perUserMax !== undefined) this.perUserMax = checkCap('perUserMax', caps.perUserMax);
    for (const u of this.users.values()) this.refresh(u);
    return this.dispatch(at);
  }

  /**
   * Makes the index match the rows, then dispatches. Sessions the rows agree
   * on keep their place, so rebuilding a consistent index changes nothing;
   * the rest are dropped, moved to running (a running row keeps its slot even
   * past a cap: the Reconciler adopts or fails it), or join the line as new
   * arrivals in `(since, sessionId)` order. On an empty index this is the
   * boot rebuild.
   */
  rebuild(rows: { queued: readonly PoolRow[]; running: readonly PoolRow[] }, at: number): Grant[] {
    const queued = new Map(rows.queued.map((r) => [r.sessionId, r]));
    const running = new Map(rows.running.map((r) => [r.sessionId, r]));
    for (const id of running.keys()) {
      if (queued.has(id)) {
        throw new PoolIndexError('POOL_ROW_CONFLICT', `session ${id} is both queued and running`);
      }
    }
    const touched = new Set<UserEntry>();
    for (const [id, s] of [...this.sessions]) {
      const u = this.users.get(s.userId) as UserEntry;
      const row = running.get(id) ?? queued.get(id);
      const same = row !== undefined && row.userId === s.userId;
      if (same && s.state === 'running' && running.has(id)) running.delete(id);
      else if (same && s.state === 'queued' && queued.has(id)) queued.delete(id);
      else {
        this.drop(u, id, s);
        touched.add(u);
      }
    }
    for (const r of running.values()) {
      const u = this.user(r.userId);
      u.active.add(r.sessionId);
      this.sessions.set(r.sessionId, {
        userId: r.userId,
        state: 'running',
        since: r.since,
        slot: -1,
      });
      this.running += 1;
      touched.add(u);
    }
    const arrivals = [...queued.values()].sort((a, b) =>
      a.since !== b.since ? a.since - b.since : a.sessionId < b.sessionId ? -1 : 1,
    );
    for (const r of arrivals) {
      const u = this.user(r.userId);
      this.append(u, r.sessionId, r.since);
      touched.add(u);
    }
    for (const u of touched) this.refresh(u);
    return this.dispatch(at);
  }

  /**
   * 0 for a session holding a slot; for a queued one, 1 + the number of
   * queued sessions ahead of it in the priority order; `null` when unknown.
   */
  positionOf(sessionId: string): number | null {
    const s = this.sessions.get(sessionId);
    if (s === undefined) return null;
    if (s.state === 'running') return 0;
    const u = this.users.get(s.userId) as UserEntry;
    return 1 + this.order.rank({ tag: u.headTag + (s.slot - u.head), joinSeq: u.joinSeq });
  }

  /** The session's state and since, or undefined. */
  session(
    sessionId: string,
  ): { userId: string; state: 'queued' | 'running'; since: number } | undefined {
    const s = this.sessions.get(sessionId);
    return s === undefined ? undefined : { userId: s.userId, state: s.state, since: s.since };
  }

  /** Every known session id with its user and state, in no particular order. */
  *entries(): IterableIterator<
    [string, { userId: string; state: 'queued' | 'running'; since: number }]
  > {
    for (const [id, s] of this.sessions)
      yield [id, { userId: s.userId, state: s.state, since: s.since }];
  }

  /** Per-user counts (users with queued or running work). */
  *userCounts(): IterableIterator<{
    userId: string;
    running: number;
    queued: number;
    cap: number;
  }> {
    for (const u of this.users.values()) {
      yield { userId: u.id, running: u.active.size, queued: qlen(u), cap: this.capOf(u.id) };
    }
  }

  /** A user's effective cap. */
  capOf(userId: string): number {
    return userCap(
      { globalMax: this.globalMax, perUserMax: this.perUserMax, overrides: this.overrides },
      userId,
    );
  }

  /** Grants while there is room and someone under their cap waits. */
  private dispatch(at: number): Grant[] {
    const grants: Grant[] = [];
    while (this.running < this.globalMax) {
      const u = this.eligible.peek();
      if (u === undefined) break;
      const sessionId = u.queue[u.head] as string;
      this.order.delete({ tag: u.headTag, joinSeq: u.joinSeq });
      u.head += 1;
      u.headTag += 1;
      const s = this.sessions.get(sessionId) as SessionEntry;
      s.state = 'running';
      s.since = at;
      s.slot = -1;
      u.active.add(sessionId);
      this.running += 1;
      grants.push({ sessionId, userId: u.id });
      this.compact(u);
      if (this.isEligible(u)) this.eligible.update(u);
      else this.eligible.remove(u);
    }
    return grants;
  }

  private user(userId: string): UserEntry {
    let u = this.users.get(userId);
    if (u === undefined) {
      u = {
        id: userId,
        queue: [],
        head: 0,
        headTag: 0,
        joinSeq: 0,
        active: new Set(),
        heapIndex: -1,
      };
      this.users.set(userId, u);
    }
    return u;
  }

  /** Adds a queued session at the tail of its user's line (no dispatch); answers how many are ahead. */
  private append(u: UserEntry, sessionId: string, since: number): number {
    if (qlen(u) === 0) {
      // Join at the earliest turn still waiting, behind everyone already in it.
      u.queue = [];
      u.head = 0;
      u.headTag = this.order.min()?.tag ?? 0;
      u.joinSeq = this.nextJoin++;
    }
    const ahead = this.order.insert({ tag: u.headTag + qlen(u), joinSeq: u.joinSeq });
    u.queue.push(sessionId);
    this.sessions.set(sessionId, {
      userId: u.id,
      state: 'queued',
      since,
      slot: u.queue.length - 1,
    });
    return ahead;
  }

  /** Removes a session from the index without dispatching. */
  private drop(u: UserEntry, sessionId: string, s: SessionEntry): void {
    this.sessions.delete(sessionId);
    if (s.state === 'running') {
      u.active.delete(sessionId);
      this.running -= 1;
      return;
    }
    // The user's later sessions move up one turn each, so the key that
    // disappears is the tail's; docs/runner-pool.md shows no one else's
    // position grows.
    this.order.delete({ tag: u.headTag + qlen(u) - 1, joinSeq: u.joinSeq });
    u.queue.splice(s.slot, 1);
    for (let i = s.slot; i < u.queue.length; i++) {
      (this.sessions.get(u.queue[i] as string) as SessionEntry).slot = i;
    }
  }

  private isEligible(u: UserEntry): boolean {
    return qlen(u) > 0 && u.active.size < this.capOf(u.id);
  }

  /** Puts the user in or out of the eligible heap, and forgets idle users. */
  private refresh(u: UserEntry): void {
    if (this.isEligible(u)) this.eligible.push(u);
    else this.eligible.remove(u);
    if (qlen(u) === 0 && u.active.size === 0 && this.users.get(u.id) === u) {
      this.users.delete(u.id);
    }
  }

  /** Drops granted cells once they are most of the array (amortised O(1)). */
  private compact(u: UserEntry): void {
    if (u.head < 64 || u.head * 2 < u.queue.length) return;
    u.queue = u.queue.slice(u.head);
    u.head = 0;
    for (let i = 0; i < u.queue.length; i++) {
      (this.sessions.get(u.queue[i] as string) as SessionEntry).slot = i;
    }
  }
}
