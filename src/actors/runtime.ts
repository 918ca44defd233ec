/**
 * `createRuntime`: assembles a node's supervision tree (DESIGN.md)
 *
 *   root (one_for_one)
 *   ├── runnerPool            permanent  holds the slot pool (an index over rows)
 *   ├── taskRunners           dynamic    one transient TaskRunner per session
 *   ├── heartbeat             permanent  this boot's node_heartbeats row, every heartbeatMs
 *   └── reconciler            permanent  boot pass + every reconcileMs
 *
 * and exposes the board port and the commands an application needs. The
 * rows decide everything; the actors are a fast index over them, so `kill()`
 * (a deploy) loses nothing: the next boot's Reconciler finds it all again.
 */
import type { AnyActorRef } from 'xstate';
import {
  cancel as cancelRow,
  createTaskWithSession,
  endBeat,
  getSessionOutput,
  getTask,
  getTaskForUser,
  inTransaction,
  listSessionsForTask,
  NotFoundError,
  queuePosition,
  retryTask,
  type Session,
  StaleStatusError,
  setUserCap,
  type Task,
  updateTaskColumn,
  ValidationError,
} from '../db/index.js';
import type { SupervisorEvent } from '../supervisor/events.js';
import { type ExitReason, isCleanExit } from '../supervisor/exitReason.js';
import { type Supervisor, startSupervisor } from '../supervisor/Supervisor.js';
import { reconcilerLogic } from './reconciler.js';
import type { PassReport } from './reconcilerSteps.js';
import type { PoolStore } from './runnerPool.js';
import { createFairSlotPool } from './runnerPoolSlotPool.js';
import { dbPoolStore } from './runnerPoolStore.js';
import { createBoardIndex } from './runtimeBoard.js';
import { heartbeatLiveness, heartbeatLogic } from './runtimeHeartbeat.js';
import { resolveRuntimeOptions } from './runtimeOptions.js';
import type { SlotWaiter } from './runtimePool.js';
import {
  type CreatedTask,
  type Runtime,
  RuntimeCommandError,
  type RuntimeExit,
  type RuntimeOptions,
  RuntimeStoppedError,
} from './runtimeTypes.js';
import { taskRunnerLogic } from './taskRunner.js';

const RUNNERS = 'taskRunners';
const POOL = 'runnerPool';

/** Starts a node. Resolves once the tree is up (the boot pass runs in the background). */
export async function createRuntime(options: RuntimeOptions): Promise<Runtime> {
  const o = resolveRuntimeOptions(options);
  const { db, backend, clock } = o;
  const owner = `${o.nodeId}@${o.bootId}`;
  const now = () => clock.now();
  let root: Supervisor | undefined;
  // The pool's loads are I/O in flight like any other (the harness settles on them).
  const rows = dbPoolStore(db);
  const store: PoolStore = {
    loadRows: () => track(rows.loadRows()),
    loadCaps: () => track(rows.loadCaps()),
    saveCap: (userId, max, at) => track(rows.saveCap(userId, max, at)),
  };
  // The fair RunnerPool, supervised: `actorOf` finds its current incarnation.
  const pool = createFairSlotPool(
    o.caps,
    now,
    store,
    // A grant to a queued row nobody waits on yet (rebuilt from rows before
    // its runner enqueued, or after a deploy): give it a runner, which
    // enqueues and is told at once that it holds the slot.
    (grant) => {
      if (!dead)
        void track(startRunner({ id: grant.sessionId, userId: grant.userId })).catch(report);
    },
    () => {
      const ref = root?.child(POOL);
      return ref !== undefined && 'send' in ref ? (ref as AnyActorRef) : undefined;
    },
  );
  const board = createBoardIndex(db, pool);
  const supervisorListeners = new Set<(event: SupervisorEvent) => void>();
  let inFlight = 0;
  let dead = false;
  let restartsTotal = 0;
  const giveUps: Record<string, number> = {};
  // `booted` and `exited`: settled once each; nobody need listen.
  let bootedSettle: { resolve(r: PassReport): void; reject(e: Error): void } | undefined;
  const booted = new Promise<PassReport>((resolve, reject) => {
    bootedSettle = { resolve, reject };
  });
  booted.catch(() => undefined);
  let exitedResolve: (exit: RuntimeExit) => void = () => {};
  const exited = new Promise<RuntimeExit>((resolve) => {
    exitedResolve = resolve;
  });
  /** Set by `stop()` / `kill()` before the root goes down: any other exit is the root giving up. */
  let ending: 'stop' | 'kill' | undefined;

  const track = <T>(work: Promise<T>): Promise<T> => {
    inFlight += 1;
    return work.finally(() => {
      inFlight -= 1;
    });
  };
  const report = (error: unknown) => {
    if (!dead) o.onError(error);
  };
  const changed = (taskId: string) => {
    if (!dead) void track(board.refresh(taskId)).catch(report);
  };
  const changedRows = (session: Session, task?: Task, outputShown?: boolean) => {
    if (!dead)
      void track(board.apply(session, task, { outputShown: outputShown ?? false })).catch(report);
  };
  /**
   * Rows this node just wrote for a session it starts a runner for: the
   * runner's first look at its row takes it from here instead of reading it
   * back (taken once; a restarted runner reads).
   */
  const fresh = new Map<string, { session: Session; task: Task }>();
  const startFresh = async (session: Session, task: Task): Promise<void> => {
    fresh.set(session.id, { session, task });
    try {
      await startRunner(session);
    } finally {
      // Taken by the runner's first step by now, or it never started.
      fresh.delete(session.id);
    }
  };

  const runners = (): Supervisor | undefined => {
    const sup = root?.child(RUNNERS);
    return sup !== undefined && 'whichChildren' in sup ? sup : undefined;
  };
  const liveRunners = (): Set<string> =>
    new Set(
      (runners()?.whichChildren() ?? []).filter((c) => c.status !== 'stopped').map((c) => c.id),
    );

  const startRunner = async (session: Pick<Session, 'id' | 'userId'>): Promise<void> => {
    const sup = runners();
    if (dead || sup === undefined) return; // the next Reconciler pass tries again
    const known = sup.whichChildren().find((c) => c.id === session.id);
    if (known && known.status !== 'stopped') return;
    try {
      if (known) await sup.terminateChild(session.id);
      await sup.startChild({
        id: session.id,
        restart: 'transient',
        start: {
          logic: runnerLogic,
          input: {
            sessionId: session.id,
            userId: session.userId,
            pollMs: o.pollMs,
            adoptBudgetMs: o.adoptBudgetMs,
            ioTimeoutMs: o.ioTimeoutMs,
          },
        },
      });
    } catch (error) {
      // Two starters racing for one session: the first one won, which is fine.
      if ((error as { code?: string }).code === 'ALREADY_STARTED') return;
      throw error;
    }
  };

  const runnerLogic = taskRunnerLogic({
    db,
    backend,
    pool,
    owner,
    caps: o.caps,
    now,
    track,
    onOutput: (sessionId, chunk) => board.appendOutput(sessionId, chunk),
    onChanged: changed,
    onRows: changedRows,
    freshRow: (sessionId) => {
      const row = fresh.get(sessionId);
      fresh.delete(sessionId);
      return row;
    },
    onRequeued: (next, task, reason) => {
      giveUps[reason] = (giveUps[reason] ?? 0) + 1;
      void track(startFresh(next, task)).catch(report);
    },
    onError: report,
  });

  const beats = {
    db,
    owner,
    nodeId: o.nodeId,
    heartbeatMs: o.heartbeatMs,
    staleBeats: o.heartbeatStaleBeats,
    now,
  };
  const heartbeat = heartbeatLogic({ ...beats, track, onError: report });
  const reconciler = reconcilerLogic({
    db,
    backend,
    pool,
    owner,
    now,
    liveness: o.liveness ?? heartbeatLiveness(beats),
    runnerImage: o.runnerImage,
    lock: o.reconcileLock,
    clock,
    passTimeoutMs: o.passTimeoutMs,
    track,
    liveRunners,
    startRunner,
    stopRunner: (sessionId) => {
      const ref = runners()?.child(sessionId);
      if (ref !== undefined && 'send' in ref) ref.send({ type: 'cancel' });
    },
    onChanged: changed,
    onError: report,
    onGiveUp: (reason) => {
      giveUps[reason] = (giveUps[reason] ?? 0) + 1;
    },
    onPass: (passReport, pass) => {
      if (dead) return;
      const loaded = track(board.loadAll()).catch(report);
      // The first boot pass that ran settles `booted`, once the board shows its result.
      if (pass.boot && passReport !== null && bootedSettle !== undefined) {
        const settle = bootedSettle;
        bootedSettle = undefined;
        void loaded.then(() => settle.resolve(passReport));
      }
    },
  });

  await board.loadAll();
  root = await startSupervisor(
    {
      id: 'root',
      strategy: 'one_for_one',
      children: [
        { id: POOL, start: { logic: pool.start.logic, input: pool.start.input } },
        { id: RUNNERS, start: { supervisor: { children: [], intensity: 20, periodMs: 5_000 } } },
        { id: 'heartbeat', start: { logic: heartbeat } },
        { id: 'reconciler', start: { logic: reconciler, input: { periodMs: o.reconcileMs } } },
      ],
    },
    { clock, ...(o.inspect ? { inspect: o.inspect } : {}) },
  );
  const top = root;

  // The root gives up when its children crash faster than its intensity:
  // it stops them all and exits, and nothing above restarts it. Tell it.
  let lastCrash: { childId: string; reason: ExitReason } | null = null;
  let intensity: { restarts: number; periodMs: number } | null = null;
  top.subscribe((event) => {
    if (event.supervisorId !== top.id) return;
    if (event.type === 'roundtable.child.exited' && !isCleanExit(event.reason))
      lastCrash = { childId: event.childId, reason: event.reason };
    if (event.type === 'roundtable.supervisor.intensity_reached')
      intensity = { restarts: event.intensity, periodMs: event.periodMs };
  });
  top.onExit((reason) => {
    const exit: RuntimeExit =
      ending === 'stop'
        ? { kind: 'stopped' }
        : ending === 'kill'
          ? { kind: 'killed' }
          : { kind: 'gave_up', reason, lastCrash, intensity };
    if (exit.kind === 'gave_up') {
      dead = true;
      pool.close();
      board.close();
    }
    bootedSettle?.reject(new RuntimeStoppedError(exit));
    bootedSettle = undefined;
    exitedResolve(exit);
  });

  // Finished runners are forgotten (a transient child that exits normally
  // stays listed otherwise), and restarts are counted for /metrics.
  const watchRunners = (sup: Supervisor | undefined) =>
    sup?.subscribe((event) => {
      for (const l of supervisorListeners) l(event);
      if (event.type === 'roundtable.child.restarting') restartsTotal += 1;
      if (event.type === 'roundtable.child.exited' && isCleanExit(event.reason) && !dead) {
        void sup.terminateChild(event.childId).catch(() => undefined);
      }
    });
  watchRunners(runners());
  top.subscribe((event) => {
    for (const l of supervisorListeners) l(event);
    if (event.type === 'roundtable.child.restarting') restartsTotal += 1;
    if (event.type === 'roundtable.child.started' && event.childId === RUNNERS) {
      watchRunners(runners());
    }
    // A restarted pool knows no waiter: every live runner enqueues or holds
    // again (its row kept its place; the new pool loaded the rows).
    if (
      event.type === 'roundtable.child.started' &&
      event.childId === POOL &&
      event.restartCount > 0 &&
      !dead
    ) {
      for (const id of liveRunners()) {
        const ref = runners()?.child(id);
        if (ref !== undefined && 'send' in ref)
          (ref as AnyActorRef).send({ type: 'pool_restarted' });
      }
    }
  });

  const taskFor = async (actor: string | null, taskId: string) => {
    try {
      return actor === null ? await getTask(db, taskId) : await getTaskForUser(db, actor, taskId);
    } catch (error) {
      if (error instanceof NotFoundError || error instanceof ValidationError) {
        throw new RuntimeCommandError('not_found', `task ${taskId} not found`, { cause: error });
      }
      throw new RuntimeCommandError('unavailable', 'the store did not answer', { cause: error });
    }
  };
  const latestSession = async (taskId: string): Promise<Session> => {
    const sessions = await listSessionsForTask(db, taskId);
    const last = sessions[sessions.length - 1];
    if (last === undefined)
      throw new RuntimeCommandError('not_found', `task ${taskId} has no session`);
    return last;
  };
  /**
   * The place the pool gives a session that was just queued, asked at once
   * with its runner as the waiter (the runner's own enqueue, after it read
   * its row, then keeps that place: same session, same waiter). 0 when it was
   * granted at once. Only while the pool is down (or the runner could not
   * start) does the answer fall back to the database's first-come order.
   */
  const placeInLine = async (session: Pick<Session, 'id' | 'userId'>): Promise<number> => {
    const ref = runners()?.child(session.id);
    if (ref !== undefined && 'send' in ref && !dead) {
      const place = pool.enqueue(session.userId, session.id, ref as SlotWaiter);
      if (place !== null) return place;
    }
    return (await queuePosition(db, session.id)) ?? 1;
  };
  const alive = () => {
    if (dead) throw new RuntimeCommandError('unavailable', 'the runtime is stopped');
  };

  const submit = async (
    userId: string,
    input: Parameters<Runtime['submit']>[1],
  ): Promise<CreatedTask> => {
    alive();
    let created: Awaited<ReturnType<typeof createTaskWithSession>>;
    try {
      created = await createTaskWithSession(db, {
        userId,
        title: input.title,
        spec: {
          image: input.image,
          command: input.command,
          ...(input.env ? { env: input.env } : {}),
        },
        column: 'queued',
        now: new Date(now()),
      });
    } catch (error) {
      if (error instanceof ValidationError) {
        throw new RuntimeCommandError('invalid', error.message, { cause: error });
      }
      throw new RuntimeCommandError('unavailable', 'the store did not answer', { cause: error });
    }
    await startFresh(created.session, created.task);
    const position = await placeInLine(created.session);
    await board.apply(created.session, created.task);
    return { ...created, position };
  };

  let stopping: Promise<void> | undefined;
  const runtime: Runtime = {
    owner,
    root: top,
    booted,
    exited,
    cards: (userId) => board.cards(userId),
    subscribe: (listener) => board.subscribe(listener),
    async createTask(userId, input) {
      const { task, session, position } = await submit(userId, input);
      return { taskId: task.id, sessionId: session.id, position };
    },
    submit,
    async cancel(actor, taskId) {
      alive();
      const task = await taskFor(actor, taskId);
      const s = await latestSession(taskId);
      if (s.status !== 'queued' && s.status !== 'running') {
        throw new RuntimeCommandError('conflict', `task ${taskId} is ${s.status}`);
      }
      const expected = { status: s.status, epoch: s.epoch };
      let after: { session: Session; task: Task };
      try {
        // The row decides first; the runner (if any) then only cleans up.
        // The card's column moves in the same commit.
        after = await inTransaction(db, async (tx) => ({
          session: await cancelRow(tx, {
            sessionId: s.id,
            expected,
            reason: actor === null ? 'cancelled by admin' : 'cancelled by user',
            node: owner,
            now: new Date(now()),
          }),
          task: await updateTaskColumn(tx, {
            userId: task.userId,
            taskId,
            column: 'failed',
            now: new Date(now()),
          }),
        }));
      } catch (error) {
        if (error instanceof StaleStatusError) {
          throw new RuntimeCommandError('conflict', `task ${taskId} moved on; try again`, {
            cause: error,
          });
        }
        throw error;
      }
      const ref = runners()?.child(s.id);
      if (ref !== undefined && 'send' in ref) (ref as AnyActorRef).send({ type: 'cancel' });
      else {
        pool.release(s.id);
        if (s.handle !== null)
          await backend.remove({ sessionId: s.id, handle: s.handle }).catch(report);
      }
      await board.apply(after.session, after.task);
    },
    async retry(actor, taskId) {
      alive();
      const task = await taskFor(actor, taskId);
      const last = await latestSession(taskId);
      if (last.status !== 'failed' && last.status !== 'cancelled') {
        throw new RuntimeCommandError('conflict', `task ${taskId} is not finished`);
      }
      const expected = { sessionId: last.id, status: last.status, epoch: last.epoch };
      let next: Session;
      let moved: Task;
      try {
        // The new attempt and the card's column, one commit.
        ({ next, moved } = await inTransaction(db, async (tx) => ({
          next: await retryTask(tx, {
            taskId,
            expected,
            now: new Date(now()),
          }),
          moved: await updateTaskColumn(tx, {
            userId: task.userId,
            taskId,
            column: 'queued',
            now: new Date(now()),
          }),
        })));
      } catch (error) {
        if (error instanceof StaleStatusError) {
          throw new RuntimeCommandError('conflict', `task ${taskId} is not finished`, {
            cause: error,
          });
        }
        throw error;
      }
      await startFresh(next, moved);
      const position = await placeInLine(next);
      await board.apply(next, moved);
      return { sessionId: next.id, position };
    },
    async setUserCap(userId, maxRunning) {
      alive();
      try {
        await setUserCap(db, { userId, maxRunning, now: new Date(now()) });
      } catch (error) {
        if (error instanceof ValidationError) {
          throw new RuntimeCommandError('invalid', error.message, { cause: error });
        }
        throw error;
      }
      pool.setUserCap(userId, maxRunning);
    },
    poolSnapshot: () => pool.snapshot(),
    sessionOutput: (userId, sessionId) => getSessionOutput(db, { userId, sessionId }),
    metrics() {
      const snap = pool.snapshot();
      return {
        queueDepth: snap.users.map((u) => ({ userId: u.userId, queued: u.queued })),
        running: snap.users.map((u) => ({ userId: u.userId, running: u.running })),
        waitSamplesSeconds: pool.drainWaitSamples(),
        restartsTotal,
        giveUpsTotal: { ...giveUps },
      };
    },
    reconcile() {
      alive();
      const ref = top.child('reconciler');
      if (ref === undefined || !('send' in ref)) {
        return Promise.reject(new RuntimeCommandError('unavailable', 'no reconciler running'));
      }
      return new Promise<void>((resolve, reject) =>
        (ref as AnyActorRef).send({
          type: 'tick',
          done: (error?: unknown) => (error === undefined ? resolve() : reject(error)),
        }),
      );
    },
    onSupervisorEvent(listener) {
      supervisorListeners.add(listener);
      return () => supervisorListeners.delete(listener);
    },
    liveRunners: () => [...liveRunners()],
    busy: () => inFlight,
    stop() {
      stopping ??= (async () => {
        ending ??= 'stop';
        await top.shutdown();
        dead = true;
        pool.close();
        board.close();
        // Stopped on purpose: other nodes need not wait out the staleness
        // window to adopt the runs this boot leaves behind.
        // A store that is down by now only costs them the window: reported.
        await endBeat(db, { owner }).catch(o.onError);
      })();
      return stopping;
    },
    kill() {
      ending ??= 'kill';
      dead = true;
      top.kill();
      pool.close();
      board.close();
    },
  };
  return runtime;
}
