/**
 * Model-based test of the pool index against the naive reference model, with
 * a fake table of session rows that the harness keeps the way the actor will:
 * a grant turns a row running, a finish ends it, a waiter crash leaves the row
 * alone (the Reconciler's business), and a rebuild replays the rows.
 */
import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import { type Grant, PoolIndex, type PoolRow } from '../../src/machines/poolIndex.js';
import { PoolModel } from './poolIndexModel.js';

type RowStatus = 'queued' | 'running' | 'done';

interface Real {
  index: PoolIndex;
  rows: Map<string, { userId: string; status: RowStatus; since: number }>;
  clock: number;
  nextId: number;
}

/** What may legitimately make a waiting session's position grow in one step. */
type Growth = 'none' | 'arrival' | 'rows';

const USERS = ['ann', 'bob', 'cyd', 'dan', 'eve'];

function rowsOf(real: Real): { queued: PoolRow[]; running: PoolRow[] } {
  const queued: PoolRow[] = [];
  const running: PoolRow[] = [];
  for (const [sessionId, r] of real.rows) {
    if (r.status === 'queued') queued.push({ sessionId, userId: r.userId, since: r.since });
    if (r.status === 'running') running.push({ sessionId, userId: r.userId, since: r.since });
  }
  return { queued, running };
}

function applyGrants(real: Real, grants: readonly Grant[]): void {
  for (const g of grants) {
    const row = real.rows.get(g.sessionId);
    expect(row?.status, `granted ${g.sessionId} must be a queued row`).toBe('queued');
    if (row) row.status = 'running';
  }
}

/** Runs one step on both sides, then checks every invariant. */
function step(
  model: PoolModel,
  real: Real,
  growth: Growth,
  act: () => { real: readonly Grant[]; model: readonly Grant[] },
): void {
  const before = new Map<string, number>();
  for (const [id, s] of real.index.entries()) {
    if (s.state === 'queued') before.set(id, real.index.positionOf(id) as number);
  }
  real.clock += 1;
  const grants = act();
  expect(grants.real).toEqual(grants.model);
  applyGrants(real, grants.real);
  checkInvariants(model, real, grants.real);
  for (const [id, was] of before) {
    const now = real.index.positionOf(id);
    if (now === null || now === 0) continue;
    if (growth === 'none') expect(now, `position of ${id} grew`).toBeLessThanOrEqual(was);
    if (growth === 'arrival')
      expect(now, `position of ${id} grew by > 1`).toBeLessThanOrEqual(was + 1);
  }
}

function checkInvariants(model: PoolModel, real: Real, grants: readonly Grant[]): void {
  const { index } = real;
  const counts = new Map([...index.userCounts()].map((c) => [c.userId, c]));
  const caps = index.caps;
  // No cap exceeded by a grant (a running row rebuilt past a lowered cap may exceed it).
  for (const g of grants) {
    const c = counts.get(g.userId);
    expect(c && c.running <= c.cap, `grant to ${g.userId} exceeds their cap`).toBe(true);
  }
  if (grants.length > 0) expect(index.runningCount).toBeLessThanOrEqual(caps.globalMax);
  // Work-conserving: no idle slot while an eligible session waits.
  if (index.runningCount < caps.globalMax) {
    for (const c of counts.values()) {
      expect(c.queued > 0 && c.running < c.cap, `idle slot while ${c.userId} waits`).toBe(false);
    }
  }
  // Slots in the index are running rows; the line is queued rows.
  let running = 0;
  for (const [id, s] of index.entries()) {
    const row = real.rows.get(id);
    expect(row?.status, `${id} is ${s.state} in the index`).toBe(s.state);
    if (s.state === 'running') running += 1;
    expect(index.positionOf(id), `position of ${id}`).toBe(model.position(id));
  }
  expect(running).toBe(index.runningCount);
  expect(index.runningCount).toBe(model.running());
  expect(index.queuedCount).toBe(model.priorityOrder().length);
}

type Cmd = fc.Command<PoolModel, Real>;

class Enqueue implements Cmd {
  constructor(readonly user: string) {}
  check = () => true;
  run(model: PoolModel, real: Real): void {
    const id = `s${real.nextId++}`;
    step(model, real, 'arrival', () => {
      real.rows.set(id, { userId: this.user, status: 'queued', since: real.clock });
      const r = real.index.enqueue(this.user, id, real.clock);
      const m = model.enqueue(this.user, id);
      expect(r.position).toBe(m.position);
      expect(r.position === 0).toBe(r.grants.some((g) => g.sessionId === id));
      return { real: r.grants, model: m.grants };
    });
  }
  toString = () => `enqueue(${this.user})`;
}

/** A session finishes: its row ends and its slot (or queue entry, if cancelled) goes. */
class Finish implements Cmd {
  constructor(readonly pick: number) {}
  check = () => true;
  run(model: PoolModel, real: Real): void {
    const held = [...real.index.entries()].map(([id]) => id);
    const id = held[this.pick % Math.max(1, held.length)];
    if (id === undefined) return;
    step(model, real, 'none', () => {
      (real.rows.get(id) as { status: RowStatus }).status = 'done';
      return { real: real.index.release(id, real.clock), model: model.release(id) };
    });
  }
  toString = () => `finish(${this.pick})`;
}

/** The waiter dies: DOWN releases the slot or queue entry; the row stays for the Reconciler. */
class Crash implements Cmd {
  constructor(readonly pick: number) {}
  check = () => true;
  run(model: PoolModel, real: Real): void {
    const held = [...real.index.entries()].map(([id]) => id);
    const id = held[this.pick % Math.max(1, held.length)];
    if (id === undefined) return;
    step(model, real, 'none', () => ({
      real: real.index.release(id, real.clock),
      model: model.release(id),
    }));
  }
  toString = () => `crash(${this.pick})`;
}

class SetCap implements Cmd {
  constructor(
    readonly user: string,
    readonly cap: number | null,
  ) {}
  check = () => true;
  run(model: PoolModel, real: Real): void {
    step(model, real, 'none', () => ({
      real: real.index.setUserCap(this.user, this.cap, real.clock),
      model: model.setUserCap(this.user, this.cap),
    }));
  }
  toString = () => `setCap(${this.user}, ${this.cap})`;
}

class SetGlobal implements Cmd {
  constructor(readonly max: number) {}
  check = () => true;
  run(model: PoolModel, real: Real): void {
    step(model, real, 'none', () => ({
      real: real.index.setDefaults({ globalMax: this.max }, real.clock),
      model: model.setGlobalMax(this.max),
    }));
  }
  toString = () => `setGlobal(${this.max})`;
}

/** The Reconciler fails an orphaned running row (no slot in the index). */
class ReconcilerFails implements Cmd {
  constructor(readonly pick: number) {}
  check = () => true;
  run(_model: PoolModel, real: Real): void {
    const orphans = [...real.rows].filter(
      ([id, r]) => r.status === 'running' && real.index.session(id) === undefined,
    );
    const orphan = orphans[this.pick % Math.max(1, orphans.length)];
    if (orphan) orphan[1].status = 'done';
  }
  toString = () => `reconcilerFails(${this.pick})`;
}

/** A new owner adopts an orphaned running row (its waiter died): it holds its slot again. */
class Adopt implements Cmd {
  constructor(readonly pick: number) {}
  check = () => true;
  run(model: PoolModel, real: Real): void {
    const orphans = [...real.rows].filter(
      ([id, r]) => r.status === 'running' && real.index.session(id) === undefined,
    );
    const orphan = orphans[this.pick % Math.max(1, orphans.length)];
    if (!orphan) return;
    const [id, row] = orphan;
    step(model, real, 'none', () => {
      real.index.hold(row.userId, id, real.clock);
      model.hold(row.userId, id);
      return { real: [], model: [] };
    });
  }
  toString = () => `adopt(${this.pick})`;
}

class Rebuild implements Cmd {
  constructor(readonly fromScratch: boolean) {}
  check = () => true;
  run(model: PoolModel, real: Real): void {
    const rows = rowsOf(real);
    if (this.fromScratch) {
      // A restart: a fresh index and model over the same rows and caps.
      // Caps live in their own rows, so they survive the restart.
      real.index = new PoolIndex(real.index.caps);
      model.nextJoin = 0;
      model.users.clear();
      model.owner.clear();
    }
    const consistent = !this.fromScratch && rowsMatch(real);
    const positions = new Map(
      [...real.index.entries()].map(([id]) => [id, real.index.positionOf(id)]),
    );
    step(model, real, 'rows', () => ({
      real: real.index.rebuild(rows, real.clock),
      model: model.rebuild(rows),
    }));
    if (consistent) {
      // Rebuilding an index that already matches its rows changes nothing.
      for (const [id, p] of positions) expect(real.index.positionOf(id)).toBe(p);
    }
  }
  toString = () => `rebuild(${this.fromScratch ? 'boot' : 'request'})`;
}

function rowsMatch(real: Real): boolean {
  for (const [id, r] of real.rows) {
    const s = real.index.session(id);
    if (r.status === 'done' ? s !== undefined : s?.state !== r.status) return false;
  }
  return true;
}

const commands = [
  fc.constantFrom(...USERS).map((u) => new Enqueue(u)),
  fc.constantFrom(...USERS).map((u) => new Enqueue(u)),
  fc.nat().map((n) => new Finish(n)),
  fc.nat().map((n) => new Crash(n)),
  fc
    .tuple(fc.constantFrom(...USERS), fc.option(fc.integer({ min: 0, max: 3 })))
    .map(([u, c]) => new SetCap(u, c)),
  fc.integer({ min: 0, max: 6 }).map((m) => new SetGlobal(m)),
  fc.nat().map((n) => new ReconcilerFails(n)),
  fc.nat().map((n) => new Adopt(n)),
  fc.boolean().map((b) => new Rebuild(b)),
];

test.prop(
  [
    fc.commands(commands, { maxCommands: 120, size: '+1' }),
    fc.integer({ min: 0, max: 6 }),
    fc.integer({ min: 0, max: 3 }),
  ],
  { numRuns: 400 },
)(
  'the index agrees with the reference model after every command',
  (cmds, globalMax, perUserMax) => {
    const model = new PoolModel(globalMax, perUserMax);
    const real: Real = {
      index: new PoolIndex({ globalMax, perUserMax }),
      rows: new Map(),
      clock: 0,
      nextId: 0,
    };
    fc.modelRun(() => ({ model, real }), cmds);
  },
);
