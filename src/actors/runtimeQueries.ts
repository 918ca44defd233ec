/**
 * What a runtime answers without writing (src/actors/runtime.ts): the
 * board's cards and line from the index, the pool and the metrics from the
 * line book, `health()` from the shell's parts, and the reads of the rows
 * (a task's page, stored output, the admin views). The commands, which
 * write, are src/actors/runtimeCommands.ts. A read of the rows the store
 * did not answer rejects as `unavailable`, like a command (503 on the board
 * API, not a 500 logged as a bug).
 */
import {
  type Db,
  getSessionOutput,
  getTaskOutput,
  getTaskRecord,
  isTransientDbError,
  readActivity,
  readLineStatus,
  readOutputPage,
  readOutputPieces,
  recentRuns,
  runningByOwner,
} from '../db/index.js';
import type { ClusterNode } from './clusterLiveness.js';
import type { BoardIndex } from './runtimeBoard.js';
import type { RuntimeMetrics } from './runtimeMetrics.js';
import {
  type Runtime,
  type RuntimeClusterNode,
  RuntimeCommandError,
  type RuntimeHealth,
  type RuntimePoolSnapshot,
} from './runtimeTypes.js';

export interface RuntimeQueryOptions {
  db: Db;
  board: Pick<BoardIndex, 'cards' | 'subscribe' | 'line'>;
  /** Whether anyone watches this board (src/actors/runtimeWatch.ts). */
  watch: { watch(): () => void };
  /** The pool as the line book has it. */
  pool(): RuntimePoolSnapshot;
  metrics: Pick<RuntimeMetrics, 'snapshot'>;
  engine: { available(): boolean };
  feed: { readonly listening: boolean; seenTick(): number };
  dispatcher: { holding(): number; backlog(): number };
  /** The boot lock's liveness, once its first attempt is over. */
  cluster(): { self(): RuntimeHealth['lock']; nodes(): Promise<ClusterNode[]> } | undefined;
  leader: { state(): RuntimeHealth['reconciler'] } | undefined;
  now(): number;
  /** Which store errors are an outage (the runtime's `isTransient`): those are `unavailable`. */
  isTransient?(error: unknown): boolean;
}

/** The read half of `Runtime`. */
export type RuntimeQueries = Pick<
  Runtime,
  | 'cards'
  | 'subscribe'
  | 'watch'
  | 'line'
  | 'poolSnapshot'
  | 'sessionOutput'
  | 'taskDetail'
  | 'taskOutput'
  | 'taskOutputPage'
  | 'taskOutputBytes'
  | 'metrics'
  | 'health'
  | 'clusterNodes'
  | 'lineStatus'
  | 'activity'
  | 'recentRuns'
>;

/**
 * Every boot with its count of the running rows it owns (0 when it owns none).
 *
 * @example
 * ```ts
 * const a = { owner: 'a@1' }, b = { owner: 'b@1' };
 * withSessionsOwned([a, b], new Map([['a@1', 3], ['c@1', 1]])) // => [{ owner: 'a@1', sessionsOwned: 3 }, { owner: 'b@1', sessionsOwned: 0 }]
 * ```
 */
export function withSessionsOwned(
  nodes: readonly ClusterNode[],
  owned: ReadonlyMap<string, number>,
): RuntimeClusterNode[] {
  return nodes.map((n) => ({ ...n, sessionsOwned: owned.get(n.owner) ?? 0 }));
}

/**
 * Rethrows a failed read of the rows as the caller sees it: a store that did
 * not answer (refused, reset or ended the connection, a deadline: the
 * transient errors of src/db/transientErrors.ts) is `unavailable`, with the
 * store's error as `cause`; anything else is a bug and goes on as it is.
 *
 * @example
 * ```ts
 * readError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })) // throws unavailable
 * readError(new Error('Connection terminated unexpectedly')) // throws unavailable
 * readError(Object.assign(new Error('syntax error'), { code: '42601' })) // throws Error
 * ```
 */
export function readError(
  error: unknown,
  isTransient: (error: unknown) => boolean = isTransientDbError,
): never {
  if (isTransient(error)) {
    throw new RuntimeCommandError('unavailable', 'the store did not answer', { cause: error });
  }
  throw error;
}

export function runtimeQueries(q: RuntimeQueryOptions): RuntimeQueries {
  const { db, board } = q;
  /** `read`'s rows, or its failure through {@link readError}, judged as the runtime judges outages. */
  const fromStore = <T>(read: Promise<T>): Promise<T> =>
    read.catch((error: unknown) => readError(error, q.isTransient));
  return {
    cards: (userId) => board.cards(userId),
    subscribe(listener, options) {
      const unsubscribe = board.subscribe(listener, options?.onRemoved);
      const release = options?.passive === true ? () => {} : q.watch.watch();
      return () => {
        unsubscribe();
        release();
      };
    },
    watch: () => q.watch.watch(),
    line: board.line,
    poolSnapshot: () => q.pool(),
    sessionOutput: (userId, sessionId) => fromStore(getSessionOutput(db, { userId, sessionId })),
    taskDetail: (actor, taskId) => fromStore(getTaskRecord(db, { actor, taskId })),
    taskOutput: (actor, taskId, sessionId) =>
      fromStore(getTaskOutput(db, { actor, taskId, sessionId })),
    taskOutputPage: (actor, taskId, sessionId, range) =>
      fromStore(readOutputPage(db, { actor, taskId, sessionId }, range)),
    taskOutputBytes: (actor, taskId, sessionId) =>
      fromStore(readOutputPieces(db, { actor, taskId, sessionId })),
    metrics: () => q.metrics.snapshot(q.pool()),
    health: () => ({
      engine: q.engine.available() ? 'available' : 'unavailable',
      notifications: q.feed.listening ? 'listening' : 'polling',
      tick: q.feed.seenTick(),
      holding: q.dispatcher.holding(),
      backlog: q.dispatcher.backlog(),
      lock: q.cluster()?.self() ?? 'none',
      reconciler: q.leader?.state() ?? 'none',
    }),
    async clusterNodes() {
      const [nodes, owned] = await fromStore(
        Promise.all([q.cluster()?.nodes() ?? Promise.resolve([]), runningByOwner(db)]),
      );
      return withSessionsOwned(nodes, owned);
    },
    lineStatus: (headSize) => fromStore(readLineStatus(db, headSize)),
    activity: ({ minutes, at }) =>
      fromStore(readActivity(db, { minutes, at: at ?? new Date(q.now()) })),
    recentRuns: (limit) => fromStore(recentRuns(db, limit)),
  };
}
