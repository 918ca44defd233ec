/**
 * Rows of a running session for driving `createBoardIndex` with no store,
 * and a heap reading after full collections: shared by the board's output
 * tests and the output benchmark, which measure retained size, not time.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Db, Session, Task } from '../../src/db/index.js';

/** A store that fails any read: the board must be fed the rows, as the runtime does. */
export const noReads = new Proxy({} as Db, {
  get(_, key) {
    throw new Error(`board read the store (${String(key)})`);
  },
});

const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms);

/** A queued session `session_1` of `task_1` with no turn key yet, as `over` changes it. */
export function queuedSession(over: Partial<Session> = {}): Session {
  return {
    id: 'session_1',
    taskId: 'task_1',
    userId: 'u1',
    kind: 'run',
    status: 'queued',
    turn: null,
    joinSeq: null,
    attempt: 1,
    enqueuedAt: at(0),
    claimedAt: null,
    backend: null,
    handle: null,
    owner: null,
    epoch: 0,
    startedAt: null,
    finishedAt: null,
    exitCode: null,
    failureReason: null,
    userRecoverable: false,
    updatedAt: at(0),
    ...over,
  };
}

/** Task `task_<n>` and its session `session_<n>`, running since `n` ms. */
export function runningRows(n: number): { task: Task; session: Session } {
  return {
    task: {
      id: `task_${n}`,
      userId: 'u1',
      title: 'run',
      spec: { image: 'i', command: ['c'] },
      column: 'running',
      createdAt: at(n),
      updatedAt: at(n),
      timeLimitMs: null,
    },
    session: {
      id: `session_${n}`,
      taskId: `task_${n}`,
      userId: 'u1',
      kind: 'run',
      status: 'running',
      turn: null,
      joinSeq: null,
      attempt: 1,
      enqueuedAt: at(n),
      claimedAt: at(n),
      backend: null,
      handle: null,
      owner: 'n',
      epoch: 1,
      startedAt: at(n),
      finishedAt: null,
      exitCode: null,
      failureReason: null,
      userRecoverable: false,
      updatedAt: at(n),
    },
  };
}

/** The rows of run `n` once it exited 0 (a later row of the same session, in the done column). */
export function succeededRows(n: number): { task: Task; session: Session } {
  const { task, session } = runningRows(n);
  const later = at(n + 1);
  return {
    task: { ...task, column: 'done', updatedAt: later },
    session: { ...session, status: 'succeeded', exitCode: 0, finishedAt: later, updatedAt: later },
  };
}

let gc: (() => void) | undefined;

/**
 * `process.memoryUsage()` after two full collections. The collector is
 * exposed through the V8 flag, so neither vitest nor `npm run bench` needs a
 * node flag.
 */
export function memoryAfterGc(): NodeJS.MemoryUsage {
  if (gc === undefined) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  gc();
  gc();
  return process.memoryUsage();
}
