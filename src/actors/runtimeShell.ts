/**
 * The node's I/O shell beside its supervision tree (src/actors/runtime.ts):
 * the dispatcher (the outbox every write rides to the database's batched
 * tick, which decides every grant for every node), the tick feed (other
 * nodes' ticks, by NOTIFY and by poll), the line book, the board index over
 * them, the engine gate and the vacuum schedule. Built over the store and
 * the clock; what a grant starts (a runner) and whether grants may be taken
 * at all (the boot lock) are the runtime's, handed in as hooks.
 */
import {
  currentTick,
  readChanges,
  readLines,
  readLiveTails,
  setWatching,
  tick,
  vacuumDispatch,
  writeLiveTails,
} from '../db/index.js';
import type { Session, Task } from '../db/rows.js';
import type { ChangedSession, TickOp, TickResult } from '../db/tickTypes.js';
import { validateTickOp } from '../db/validateTickOp.js';
import { Dispatcher } from './dispatcher.js';
import { LineBook } from './lineBook.js';
import { LiveTailReader, LiveTailWriter } from './liveTailShare.js';
import { type ApplyOptions, type BoardIndex, createBoardIndex } from './runtimeBoard.js';
import { linePositions } from './runtimeBoardPositions.js';
import { RESTORE_TAIL_CHARS } from './runtimeBoardRows.js';
import { EngineGate } from './runtimeEngine.js';
import { RIDE_MAX_CHANGES, TickFeed } from './runtimeFeed.js';
import type { TickSample } from './runtimeMetrics.js';
import type { ResolvedRuntimeOptions } from './runtimeOptions.js';
import { VACUUM_EVERY, VacuumSchedule } from './runtimeVacuum.js';
import { BoardWatch } from './runtimeWatch.js';

/** How long a board stays watched after its last watcher left (a page reload writes nothing). */
export const WATCH_LINGER_MS = 1_000;

/** What the shell is built from: the resolved options it reads, and the runtime's hooks. */
export interface ShellOptions {
  o: Pick<
    ResolvedRuntimeOptions,
    | 'db'
    | 'backend'
    | 'clock'
    | 'caps'
    | 'localMax'
    | 'storeDeadlineMs'
    | 'commandOutageMs'
    | 'dispatchPollMs'
    | 'notifications'
    | 'positionPushMs'
    | 'liveOutputMs'
  >;
  owner: string;
  isTransient(error: unknown): boolean;
  /** Whether this boot may take grants apart from its engine (the boot lock is held). */
  mayGrant(): boolean;
  /** A grant to this node, while it is alive: start its runner. */
  onGranted(grant: { session: Session; task: Task }): void;
  /** Sessions another node's ticks changed, as the feed brings them (after the board has them). */
  onChangedElsewhere?(sessions: readonly ChangedSession[]): void;
  /** Each tick this node sent, once it came back or failed (for /metrics). */
  onTicked?(t: TickSample): void;
  /** The runtime is shutting down or gave up: rows that arrive now are not shown. */
  isDead(): boolean;
  report(error: unknown): void;
  track<T>(work: Promise<T>): Promise<T>;
}

/** The shell's parts, and its start and stop. */
export interface Shell {
  readonly lines: LineBook;
  readonly board: BoardIndex;
  readonly engine: EngineGate;
  readonly dispatcher: Dispatcher;
  readonly feed: TickFeed;
  readonly watch: BoardWatch;
  /** Shares the output of this node's runs with the other nodes' boards (null: not shared). */
  readonly liveTails: LiveTailWriter | null;
  /**
   * Reads the tick and the lines as they are now, for the feed to start
   * from (lines read after the tick can only be newer: the feed's first read
   * re-applies them).
   */
  prime(): Promise<void>;
  /** Starts the feed from the primed tick, the board's watch, and sends the first tick. */
  start(): Promise<void>;
  /** Stops the dispatcher, the feed, the engine's probe and the board's pushes. */
  stop(): void;
}

/** One card a tick's reply shows, with the rows it returned. */
export interface TickCard {
  session: Session;
  task: Task | undefined;
  options?: ApplyOptions;
}

/**
 * The cards a committed tick shows, in the reply's order: each applied
 * outcome's session, then its next attempt's (a re-queued run). A run this
 * node finished (a `finish` op in the tick) streamed its output here already,
 * or had none: its card needs no read of the stored output.
 *
 * @example
 * ```ts
 * const s1 = { id: 's1' }, s2 = { id: 's2' }, t = { id: 't' };
 * const result = { outcomes: [
 *   { kind: 'applied', ref: '1', session: s1, task: t, next: { session: s2 } },
 *   { kind: 'conflict', ref: '2' },
 * ] };
 * tickCards(result, [{ op: 'finish', ref: '1' }]) // => [{ session: s1, task: t, options: { outputShown: true } }, { session: s2, task: t }]
 * tickCards({ outcomes: [{ kind: 'applied', ref: '3', session: s1, task: null }] }, []) // => [{ session: s1, task: undefined, options: { outputShown: false } }]
 * ```
 */
export function tickCards(
  result: Pick<TickResult, 'outcomes'>,
  ops: readonly Pick<TickOp, 'op' | 'ref'>[],
): TickCard[] {
  const finished = new Set<string>();
  for (const op of ops) if (op.op === 'finish') finished.add(op.ref);
  const cards: TickCard[] = [];
  for (const x of result.outcomes) {
    if (x.kind !== 'applied') continue;
    const task = x.task ?? undefined;
    cards.push({ session: x.session, task, options: { outputShown: finished.has(x.ref) } });
    if (x.next !== undefined) cards.push({ session: x.next.session, task });
  }
  return cards;
}

/** Builds the shell; nothing runs until `prime()` and `start()`. */
export function createShell(s: ShellOptions): Shell {
  const { db, backend, clock } = s.o;
  const { report, track, isDead } = s;
  const vacuum = new VacuumSchedule({
    every: VACUUM_EVERY,
    vacuum: () => vacuumDispatch(db),
    track,
    onError: report,
  });
  const lines = new LineBook();
  const board = createBoardIndex(
    db,
    linePositions(lines),
    { schedule: (fn, ms) => clock.setTimeout(fn, ms), pushEveryMs: s.o.positionPushMs },
    report,
  );
  const engine = new EngineGate({
    backend,
    clock,
    onChange: () => dispatcher.poke(),
    onError: report,
    track,
  });
  /** The `since` each reply answers (see the dispatcher's `tick`). */
  const sentWith = new WeakMap<TickResult, number>();
  const dispatcher: Dispatcher = new Dispatcher({
    owner: s.owner,
    caps: s.o.caps,
    localMax: s.o.localMax ?? s.o.caps.maxRunning,
    clock,
    // Each tick says what this node has seen, so its reply brings what other
    // nodes changed since (the feed reads only what no reply covers).
    tick: async (input) => {
      const since = feed.sending();
      const sentAt = clock.now();
      const ticked = (ok: boolean) =>
        s.onTicked?.({ ms: clock.now() - sentAt, ops: input.ops.length, ok });
      try {
        const result = await tick(db, {
          ...input,
          since,
          tailChars: RESTORE_TAIL_CHARS,
          changesMax: RIDE_MAX_CHANGES,
        });
        ticked(true);
        sentWith.set(result, since);
        // Before the dispatcher sends the next tick (see TickFeed.landed).
        feed.landed(result);
        return result;
      } catch (error) {
        ticked(false);
        feed.ownFailed();
        throw error;
      }
    },
    isTransient: s.isTransient,
    backoff: { baseMs: 50, maxMs: 1_000 },
    opDeadlineMs: s.o.storeDeadlineMs,
    commandOutageMs: s.o.commandOutageMs,
    maxOpsPerTick: 500,
    // The commands' ops (what callers hand in) are checked at submit, so a
    // bad one is its caller's error at once. The runners' handle and finish
    // ops are built here from typed rows: the tick's own check before any
    // SQL (tickPayload) covers them, without a second zod pass per job.
    validate: (op) => {
      if (op.op !== 'handle' && op.op !== 'finish') validateTickOp(op);
    },
    // No grant before the boot lock is taken, nor while it is lost.
    mayGrant: () => !isDead() && engine.available() && s.mayGrant(),
    onTick(result, ops) {
      if (isDead()) return;
      vacuum.ticked();
      lines.apply(result.lines, result.running, result.tick);
      feed.own(result, sentWith.get(result));
      for (const c of tickCards(result, ops))
        void board.apply(c.session, c.task, { ...c.options, asOf: result.tick }).catch(report);
    },
    onGranted(grant) {
      if (isDead()) return;
      s.onGranted(grant);
    },
    onError: report,
    track,
  });
  const feed = new TickFeed({
    owner: s.owner,
    clock,
    pollMs: s.o.dispatchPollMs,
    ...(s.o.notifications ? { notifications: s.o.notifications } : {}),
    currentTick: () => currentTick(db),
    readChanges: (since, skipTicks) =>
      readChanges(db, since, { tailChars: RESTORE_TAIL_CHARS, skipTicks }),
    onChanges(changes) {
      if (isDead()) return;
      lines.apply(changes.lines, changes.running, changes.tick);
      for (const c of changes.sessions)
        void board
          .apply(
            c.session,
            c.task,
            c.output === undefined
              ? { asOf: changes.tick }
              : { storedOutput: c.output, asOf: changes.tick },
          )
          .catch(report);
      try {
        s.onChangedElsewhere?.(changes.sessions);
      } catch (error) {
        report(error);
      }
    },
    onNewerTick: (t) => dispatcher.poke(t),
    onError: report,
    track,
  });

  const watch = new BoardWatch({
    clock,
    lingerMs: WATCH_LINGER_MS,
    write: (watching) => setWatching(db, { owner: s.owner, watching }),
    catchUp: () => feed.catchUp(),
    onWatched: (watched) => otherTails?.setWatched(watched && !isDead()),
    onError: report,
    track,
  });

  const everyMs = s.o.liveOutputMs;
  const liveTails =
    everyMs === null
      ? null
      : new LiveTailWriter({
          owner: s.owner,
          clock,
          everyMs,
          heldEpoch: (id) => dispatcher.heldEpoch(id),
          write: (input) => writeLiveTails(db, input),
          onError: report,
          track,
        });
  const otherTails =
    everyMs === null
      ? null
      : new LiveTailReader({
          clock,
          everyMs,
          remote: () =>
            board.runningSessions().filter((r) => dispatcher.heldEpoch(r.sessionId) === undefined),
          read: (known) => readLiveTails(db, known),
          show: (t) => board.showTail(t.sessionId, t.epoch, t.lines),
          onError: report,
          track,
        });

  let startTick = 0;
  return {
    lines,
    board,
    engine,
    dispatcher,
    feed,
    watch,
    liveTails,
    async prime() {
      startTick = await currentTick(db);
      const startLines = await readLines(db);
      lines.reset(
        startLines,
        startLines.reduce((n, l) => n + l.running, 0),
      );
    },
    async start() {
      await feed.start(startTick);
      // After the first beat: the row it wrote is the one the flag is on.
      watch.start();
      dispatcher.poke();
    },
    stop() {
      dispatcher.stop();
      watch.stop();
      liveTails?.stop();
      otherTails?.stop();
      feed.stop();
      engine.stop();
      board.close();
    },
  };
}
