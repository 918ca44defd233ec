/**
 * The RunnerPool actor: who holds a runner slot, under the supervisor. Its
 * state is only the pool index over session rows plus the live waiters; the
 * decisions are the pure index's (src/machines/poolIndex.ts), the I/O (rows,
 * caps) comes through an injected `PoolStore`, and monitoring through an
 * injected `PoolMonitor` (the supervisor's monitor by default).
 *
 * While `booting` (first rows not loaded yet) enqueues are accepted and get a
 * position but nothing is granted: an empty index would hand out slots the
 * running rows already hold.
 */
import { assign, fromPromise, setup } from 'xstate';
import type { PoolCaps } from '../machines/poolCaps.js';
import { type Grant, PoolIndex, type PoolRow } from '../machines/poolIndex.js';
import { type DownEvent, demonitor, type MonitorRef, monitor } from '../supervisor/monitor.js';
import type { Watchable } from '../supervisor/watchExit.js';

/** The grant a waiter receives. */
export interface RunnerSlotEvent {
  type: 'runner_slot';
  sessionId: string;
}

/** A waiter: an actor that can be monitored and told it holds a slot. */
export type PoolWaiter = Watchable & { send(event: RunnerSlotEvent): void };

/** The rows the pool is an index of. */
export interface PoolRows {
  queued: readonly PoolRow[];
  running: readonly PoolRow[];
}

/** The durable side: rows and caps. Implemented over src/db by runnerPoolStore.ts. */
export interface PoolStore {
  /** Queued rows (any order: the pool sorts by since) and running rows. */
  loadRows(): Promise<PoolRows>;
  /** Every `user_caps` override. */
  loadCaps(): Promise<Map<string, number>>;
  /** Writes (`null`: deletes) an override. */
  saveCap(userId: string, max: number | null, at: number): Promise<void>;
}

/** How the pool watches its waiters. */
export interface PoolMonitor {
  monitor(watcher: { send(event: DownEvent): void }, target: Watchable): MonitorRef;
  demonitor(ref: MonitorRef, options: { flush: boolean }): boolean;
}

export const supervisorMonitor: PoolMonitor = { monitor, demonitor };

export interface RunnerPoolInput {
  /** Global and default per-user caps; overrides come from the store. */
  caps: Omit<PoolCaps, 'overrides'>;
  now: () => number;
  monitor?: PoolMonitor;
  /** A grant to a session nobody waits for (rebuilt from rows): start a runner for it. */
  onUnwaitedGrant?: (grant: Grant) => void;
  /** How a grant reaches its waiter. Default: sent in the step that made it. */
  deliver?: (waiter: PoolWaiter, event: RunnerSlotEvent) => void;
  /**
   * Called in every step that changed the index (positions may have moved).
   * Must not call the pool back synchronously: schedule the work (the board
   * recomputes its positions once per microtask).
   */
  onChange?: () => void;
}

export type RunnerPoolEvent =
  | { type: 'enqueue'; userId: string; sessionId: string; waiter: PoolWaiter }
  | { type: 'hold'; userId: string; sessionId: string; waiter: PoolWaiter }
  | { type: 'release'; sessionId: string }
  | { type: 'set_cap'; userId: string; max: number | null }
  | { type: 'rebuild' }
  /** Rows a caller loaded (the Reconciler): sessions with a live waiter keep their entry. */
  | { type: 'rows'; rows: PoolRows; overrides?: ReadonlyMap<string, number> }
  | DownEvent;

interface Waiting {
  waiter: PoolWaiter;
  ref: MonitorRef;
}

export interface RunnerPoolContext {
  index: PoolIndex;
  waiters: Map<string, Waiting>;
  bySessionRef: Map<MonitorRef, string>;
  /** Position answered by the last enqueue (read synchronously by the client). */
  lastPosition: number;
  /** Sessions changed since the current load began: the rows may predate them. */
  touched: Map<string, 'live' | 'gone'>;
  /** Bumped on every change so subscribers see a new snapshot. */
  version: number;
  globalMax: number;
  input: RunnerPoolInput;
}

/**
 * Loading rows and caps: the only I/O, as an injected actor so tests provide
 * a fake and the machine never imports the database.
 */
export const loadPoolRows = (store: PoolStore) =>
  fromPromise(async (): Promise<{ rows: PoolRows; overrides: Map<string, number> }> => {
    const [rows, overrides] = await Promise.all([store.loadRows(), store.loadCaps()]);
    return { rows, overrides };
  });

function unwatch(ctx: RunnerPoolContext, sessionId: string): void {
  const w = ctx.waiters.get(sessionId);
  if (w === undefined) return;
  (ctx.input.monitor ?? supervisorMonitor).demonitor(w.ref, { flush: true });
  ctx.bySessionRef.delete(w.ref);
  ctx.waiters.delete(sessionId);
}

function watch(
  ctx: RunnerPoolContext,
  self: { send(e: DownEvent): void; getSnapshot(): { status: string } },
  sessionId: string,
  waiter: PoolWaiter,
): void {
  const prev = ctx.waiters.get(sessionId);
  if (prev?.waiter === waiter) return;
  unwatch(ctx, sessionId);
  // A pool that was stopped (restarted by its supervisor) cannot take back
  // its monitors; their late DOWNs are dropped rather than sent to a corpse.
  const watcher = {
    send: (down: DownEvent) => {
      if (self.getSnapshot().status === 'active') self.send(down);
    },
  };
  const ref = (ctx.input.monitor ?? supervisorMonitor).monitor(watcher, waiter);
  ctx.waiters.set(sessionId, { waiter, ref });
  ctx.bySessionRef.set(ref, sessionId);
}

/** Tells each granted session's waiter, in the step that made the grant. */
function deliver(ctx: RunnerPoolContext, grants: readonly Grant[]): void {
  for (const g of grants) {
    ctx.touched.set(g.sessionId, 'live');
    const w = ctx.waiters.get(g.sessionId);
    const event: RunnerSlotEvent = { type: 'runner_slot', sessionId: g.sessionId };
    if (w === undefined) ctx.input.onUnwaitedGrant?.(g);
    else if (ctx.input.deliver) ctx.input.deliver(w.waiter, event);
    else w.waiter.send(event);
  }
}

/**
 * The rows a load returned, corrected by what happened while it ran: a
 * session enqueued or granted meanwhile keeps its place, one released
 * meanwhile stays gone. Pure.
 *
 * @example
 * ```ts
 * const rows = { queued: [{ sessionId: 'a', userId: 'u', since: 1 }], running: [] };
 * const live = new Map([['b', { userId: 'u', state: 'queued', since: 2 }]]);
 * correctRows(rows, new Map([['a', 'gone'], ['b', 'live']]), (id) => live.get(id)).queued // => [{ sessionId: 'b', userId: 'u', since: 2 }]
 * ```
 */
export function correctRows(
  rows: PoolRows,
  touched: ReadonlyMap<string, 'live' | 'gone'>,
  current: (
    sessionId: string,
  ) => { userId: string; state: 'queued' | 'running'; since: number } | undefined,
): PoolRows {
  const keep = (r: PoolRow) => !touched.has(r.sessionId);
  const queued = rows.queued.filter(keep);
  const running = rows.running.filter(keep);
  for (const [sessionId, mark] of touched) {
    const s = current(sessionId);
    if (mark === 'gone' || s === undefined) continue;
    (s.state === 'queued' ? queued : running).push({ sessionId, userId: s.userId, since: s.since });
  }
  return { queued, running };
}

/**
 * Applies loaded rows (and caps, when given): overrides first, then the rows
 * corrected by `touched`, then the global cap. While booting the global cap is
 * 0, so the one dispatch happens with everything in.
 */
function applyRows(
  ctx: RunnerPoolContext,
  rows: PoolRows,
  overrides: ReadonlyMap<string, number> | undefined,
  touched: ReadonlyMap<string, 'live' | 'gone'>,
): void {
  const at = ctx.input.now();
  const grants: Grant[] = [];
  if (overrides !== undefined) {
    for (const userId of ctx.index.caps.overrides.keys()) {
      if (!overrides.has(userId)) grants.push(...ctx.index.setUserCap(userId, null, at));
    }
    for (const [userId, max] of overrides) grants.push(...ctx.index.setUserCap(userId, max, at));
  }
  const corrected = correctRows(rows, touched, (id) => ctx.index.session(id));
  grants.push(...ctx.index.rebuild(corrected, at));
  grants.push(...ctx.index.setDefaults({ globalMax: ctx.globalMax }, at));
  for (const id of [...ctx.waiters.keys()]) {
    if (ctx.index.session(id) === undefined) unwatch(ctx, id);
  }
  // Only grants still standing after the rebuild go out.
  deliver(
    ctx,
    grants.filter((g) => ctx.index.session(g.sessionId)?.state === 'running'),
  );
}

/** The next version, telling `onChange` that the index moved. */
function bump(ctx: RunnerPoolContext): number {
  ctx.input.onChange?.();
  return ctx.version + 1;
}

/** Takes back every monitor (the pool is stopping; its waiters outlive it). */
export function forgetWaiters(ctx: RunnerPoolContext): void {
  for (const id of [...ctx.waiters.keys()]) unwatch(ctx, id);
}

export const runnerPoolMachine = setup({
  types: {
    context: {} as RunnerPoolContext,
    events: {} as RunnerPoolEvent,
    input: {} as RunnerPoolInput,
  },
  actors: {
    load: fromPromise<{ rows: PoolRows; overrides: Map<string, number> }>(async () => {
      throw new Error('runnerPool: provide the load actor (loadPoolRows(store))');
    }),
  },
  actions: {
    enqueue: assign(({ context: ctx, event, self }) => {
      if (event.type !== 'enqueue') return {};
      const at = ctx.input.now();
      const known = ctx.index.session(event.sessionId);
      watch(ctx, self, event.sessionId, event.waiter);
      ctx.touched.set(event.sessionId, 'live');
      if (known?.state === 'running') {
        // A restarted waiter asking again: it already holds the slot.
        const slot: RunnerSlotEvent = { type: 'runner_slot', sessionId: event.sessionId };
        if (ctx.input.deliver) ctx.input.deliver(event.waiter, slot);
        else event.waiter.send(slot);
        return { lastPosition: 0, version: bump(ctx) };
      }
      const r = ctx.index.enqueue(event.userId, event.sessionId, at);
      deliver(ctx, r.grants);
      return { lastPosition: r.position, version: bump(ctx) };
    }),
    hold: assign(({ context: ctx, event, self }) => {
      if (event.type !== 'hold') return {};
      watch(ctx, self, event.sessionId, event.waiter);
      ctx.touched.set(event.sessionId, 'live');
      ctx.index.hold(event.userId, event.sessionId, ctx.input.now());
      return { version: bump(ctx) };
    }),
    release: assign(({ context: ctx, event }) => {
      let sessionId: string | undefined;
      if (event.type === 'release') sessionId = event.sessionId;
      if (event.type === 'DOWN') {
        // A DOWN for a monitor already taken back is stale: ignore it.
        sessionId = ctx.bySessionRef.get(event.ref);
        if (sessionId === undefined) return {};
      }
      if (sessionId === undefined) return {};
      unwatch(ctx, sessionId);
      ctx.touched.set(sessionId, 'gone');
      deliver(ctx, ctx.index.release(sessionId, ctx.input.now()));
      return { version: bump(ctx) };
    }),
    setCap: assign(({ context: ctx, event }) => {
      if (event.type !== 'set_cap') return {};
      deliver(ctx, ctx.index.setUserCap(event.userId, event.max, ctx.input.now()));
      return { version: bump(ctx) };
    }),
    beginLoad: assign({ touched: () => new Map<string, 'live' | 'gone'>() }),
  },
}).createMachine({
  id: 'runnerPool',
  context: ({ input }) => ({
    // Nothing is granted until the rows are in: globalMax 0 while booting.
    index: new PoolIndex({ ...input.caps, globalMax: 0 }),
    waiters: new Map(),
    bySessionRef: new Map(),
    lastPosition: 0,
    touched: new Map(),
    version: 0,
    globalMax: input.caps.globalMax,
    input,
  }),
  on: {
    enqueue: { actions: 'enqueue' },
    hold: { actions: 'hold' },
    release: { actions: 'release' },
    DOWN: { actions: 'release' },
    set_cap: { actions: 'setCap' },
    rows: {
      actions: assign(({ context: ctx, event }) => {
        if (event.type !== 'rows') return {};
        const live = new Map<string, 'live' | 'gone'>([...ctx.touched]);
        for (const id of ctx.waiters.keys()) live.set(id, 'live');
        applyRows(ctx, event.rows, event.overrides, live);
        return { version: bump(ctx) };
      }),
    },
  },
  initial: 'loading',
  states: {
    loading: {
      entry: 'beginLoad',
      invoke: {
        src: 'load',
        onDone: {
          target: 'ready',
          actions: assign(({ context: ctx, event }) => {
            // As for the `rows` event: a session with a live waiter keeps its
            // entry (a grant not yet claimed, a run not yet released), so a
            // reload after a refused claim cannot hand out its slot twice.
            const live = new Map<string, 'live' | 'gone'>([...ctx.touched]);
            for (const id of ctx.waiters.keys()) if (!live.has(id)) live.set(id, 'live');
            applyRows(ctx, event.output.rows, event.output.overrides, live);
            return { touched: new Map(), version: bump(ctx) };
          }),
        },
        // A failed load is the supervisor's business: the error escalates.
      },
    },
    ready: {
      on: { rebuild: { target: 'loading' } },
    },
  },
});
