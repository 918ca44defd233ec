/**
 * `createRuntime`: assembles a node's supervision tree (DESIGN.md)
 *
 *   root (one_for_one)
 *   ├── runnerPool            permanent  watches the holders of this node's slots (DOWN)
 *   ├── taskRunners           dynamic    one transient TaskRunner per granted session
 *   ├── heartbeat             permanent  this boot's node_heartbeats row, every heartbeatMs
 *   └── reconciler            permanent  boot pass + every reconcileMs
 *
 * beside the node's I/O shell: the dispatcher (the outbox every write rides
 * to the database's batched tick, which decides every grant for every node),
 * the tick feed (other nodes' ticks, by NOTIFY and by poll) and the board.
 * The rows decide everything, so `kill()` (a deploy) loses nothing.
 */
import {
  beat,
  currentTick,
  endBeat,
  getSessionOutput,
  getTask,
  getTaskForUser,
  getTaskOutput,
  getTaskRecord,
  listSessionsForTask,
  readActivity,
  readChanges,
  readLineStatus,
  readLines,
  repairDispatch,
  runningByOwner,
  tick,
  vacuumDispatch,
} from '../db/index.js';
import { isTransientDbError } from '../db/transientErrors.js';
import { validateTickOp } from '../db/validateTickOp.js';
import { type Supervisor, startSupervisor } from '../supervisor/Supervisor.js';
import type { ClusterLiveness } from './clusterLiveness.js';
import { startClusterLiveness } from './clusterLivenessWiring.js';
import { Dispatcher } from './dispatcher.js';
import { LineBook } from './lineBook.js';
import { reconcilerLogic, requestPass } from './reconciler.js';
import { runnerPoolMachine } from './runnerPool.js';
import { createBoardIndex } from './runtimeBoard.js';
import { linePositions } from './runtimeBoardPositions.js';
import { BootSignal } from './runtimeBooted.js';
import { runtimeCommands } from './runtimeCommands.js';
import { EngineGate } from './runtimeEngine.js';
import {
  classifyExit,
  NO_CRASHES,
  noteRootEvent,
  type RuntimeEnding,
  type RuntimeExit,
} from './runtimeExit.js';
import { TickFeed } from './runtimeFeed.js';
import { heartbeatLogic, staleAfterMs } from './runtimeHeartbeat.js';
import { holderDown } from './runtimeHolderDown.js';
import { InFlight } from './runtimeInFlight.js';
import { RuntimeMetrics } from './runtimeMetrics.js';
import { resolveRuntimeOptions } from './runtimeOptions.js';
import { RunnerStarter } from './runtimeRunners.js';
import { TreeWatch } from './runtimeTreeWatch.js';
import type { Runtime, RuntimeOptions } from './runtimeTypes.js';
import { VACUUM_EVERY, VacuumSchedule } from './runtimeVacuum.js';
import { taskRunnerLogic } from './taskRunner.js';

const RUNNERS = 'taskRunners';
const POOL = 'runnerPool';

/** Starts a node. Resolves once the tree is up (the boot pass runs in the background). */
export async function createRuntime(options: RuntimeOptions): Promise<Runtime> {
  const o = resolveRuntimeOptions(options);
  const { db, backend, clock } = o;
  const owner = `${o.nodeId}@${o.bootId}`;
  const now = () => clock.now();
  const isTransient = o.isTransient ?? isTransientDbError;
  let root: Supervisor | undefined;
  /** Set once the boot lock's first attempt is over (src/actors/clusterLiveness.ts). */
  let cluster: ClusterLiveness | undefined;
  let dead = false;
  const metrics = new RuntimeMetrics();
  const inFlight = new InFlight();
  const { track } = inFlight;
  const report = (error: unknown) => {
    if (!dead) o.onError(error);
  };

  const vacuum = new VacuumSchedule({
    every: VACUUM_EVERY,
    vacuum: () => vacuumDispatch(db),
    track,
    onError: report,
  });
  const lines = new LineBook();
  const board = createBoardIndex(db, linePositions(lines), {
    schedule: (fn, ms) => clock.setTimeout(fn, ms),
    pushEveryMs: o.positionPushMs,
  });
  const runners = (): Supervisor | undefined => root?.childSupervisor(RUNNERS);
  const engine = new EngineGate({
    backend,
    clock,
    onChange: () => dispatcher.poke(),
    onError: report,
    track,
  });

  const dispatcher: Dispatcher = new Dispatcher({
    owner,
    caps: o.caps,
    localMax: o.localMax ?? o.caps.maxRunning,
    clock,
    tick: (input) => tick(db, input),
    isTransient,
    backoff: { baseMs: 50, maxMs: 1_000 },
    opDeadlineMs: o.storeDeadlineMs,
    maxOpsPerTick: 500,
    // The commands' ops (what callers hand in) are checked at submit, so a
    // bad one is its caller's error at once. The runners' handle and finish
    // ops are built here from typed rows: the tick's own check before any
    // SQL (tickPayload) covers them, without a second zod pass per job.
    validate: (op) => {
      if (op.op !== 'handle' && op.op !== 'finish') validateTickOp(op);
    },
    // No grant before the boot lock is taken, nor while it is lost.
    mayGrant: () => !dead && engine.available() && (cluster?.canGrant() ?? false),
    onTick(result, ops) {
      if (dead) return;
      vacuum.ticked();
      lines.apply(result.lines, result.running);
      feed.own(result);
      // A run this node finished streamed its output here already (or had
      // none): its card needs no read of the stored output.
      const finished = new Set<string>();
      for (const op of ops) if (op.op === 'finish') finished.add(op.ref);
      for (const x of result.outcomes) {
        if (x.kind !== 'applied') continue;
        const outputShown = finished.has(x.ref);
        void board.apply(x.session, x.task ?? undefined, { outputShown }).catch(report);
        if (x.next !== undefined)
          void board.apply(x.next.session, x.task ?? undefined).catch(report);
      }
    },
    onGranted(grant) {
      if (dead) return;
      metrics.granted(grant.session.enqueuedAt, now());
      void board.apply(grant.session, grant.task).catch(report);
      // A grant whose runner cannot start (the runner supervisor is down or
      // restarting) must not hold its slot for ever: it goes back as a DOWN would.
      void track(starter.granted(grant))
        .catch(report)
        .then(() => {
          if (!starter.has(grant.session.id)) onHolderDown(grant.session.id);
        });
    },
    onError: report,
    track,
  });
  const feed = new TickFeed({
    owner,
    clock,
    pollMs: o.dispatchPollMs,
    ...(o.notifications ? { notifications: o.notifications } : {}),
    currentTick: () => currentTick(db),
    readChanges: (since) => readChanges(db, since),
    onChanges(changes) {
      if (dead) return;
      lines.apply(changes.lines, changes.running);
      for (const c of changes.sessions) void board.apply(c.session, c.task).catch(report);
    },
    onNewerTick: (t) => dispatcher.poke(t),
    onError: report,
    track,
  });

  const runnerLogic = taskRunnerLogic({
    db,
    backend,
    slots: {
      submit: (op) => dispatcher.submit(op),
      hold(sessionId, epoch, holder) {
        dispatcher.hold(sessionId, epoch);
        root?.child(POOL)?.send({ type: 'roundtable.pool.hold', sessionId, holder });
      },
      release(sessionId) {
        dispatcher.drop(sessionId);
        root?.child(POOL)?.send({ type: 'roundtable.pool.release', sessionId });
      },
    },
    owner,
    clock,
    isTransient,
    storeDeadlineMs: o.storeDeadlineMs,
    onOutput: (sessionId, chunk) => board.appendOutput(sessionId, chunk),
    onRows: (session, task, outputShown) => {
      if (!dead)
        void track(
          board.apply(session, task ?? undefined, { outputShown: outputShown ?? false }),
        ).catch(report);
    },
    grantOf: (sessionId) => starter.take(sessionId),
    fencedOf: (sessionId) => starter.takeFenced(sessionId),
    mayAdopt: (s) => mayAdopt(s),
    onStartFailure: (error, session) => engine.startFailed(error, session),
    onRequeued: (reason) => metrics.gaveUp(reason),
    onError: report,
    track,
  });
  const starter = new RunnerStarter({
    runners,
    logic: runnerLogic,
    input: { pollMs: o.pollMs, adoptBudgetMs: o.adoptBudgetMs, ioTimeoutMs: o.ioTimeoutMs },
    isDead: () => dead,
  });
  /** Sessions this boot runs or is about to (granted, runner starting): the Reconciler leaves them be. */
  const ours = (): Set<string> => {
    const live = starter.live();
    for (const id of dispatcher.heldIds()) live.add(id);
    return live;
  };

  const onHolderDown = holderDown({
    heldEpoch: (sessionId) => dispatcher.heldEpoch(sessionId),
    drop: (sessionId) => dispatcher.drop(sessionId),
    hasRunner: (sessionId) => starter.has(sessionId),
    runnersSettled: () => runners()?.sync() ?? Promise.resolve(),
    submit: (op) => dispatcher.submit(op),
    removeRun: (run) => backend.remove(run),
    isDead: () => dead,
    track,
    onError: report,
  });

  // The feed starts from the tick and the lines as they are now (lines read
  // after the tick can only be newer: the feed's first read re-applies them).
  const startTick = await currentTick(db);
  const startLines = await readLines(db);
  lines.reset(
    startLines,
    startLines.reduce((n, l) => n + l.running, 0),
  );
  // The board fills in from the rows in the background: a node with a long
  // history takes work at once, and a row a tick returns meanwhile wins over
  // the older one the load read (isNewer). `booted` waits for it.
  const boardLoaded = track(board.loadAll()).catch(report);

  const beats = {
    db,
    owner,
    nodeId: o.nodeId,
    heartbeatMs: o.heartbeatMs,
    staleBeats: o.heartbeatStaleBeats,
    now,
    // Said in the row, so a watch that never saw this boot's lock held still knows to expect it.
    holdsBootLock: () => cluster?.self() === 'held',
  };
  const heartbeat = heartbeatLogic({ ...beats, track, onError: report });
  // The boot lock is taken before the first beat: a row with no lock yet
  // would read as a boot that lost it.
  const wired = await startClusterLiveness({
    db,
    owner,
    nodeId: o.nodeId,
    clock,
    pollMs: o.livenessPollMs,
    staleAfterMs: staleAfterMs(beats),
    bootLock: o.bootLock,
    reconcileLock: o.reconcileLock,
    liveness: o.liveness,
    beats,
    reconcilerRef: () => root?.child('reconciler'),
    poke: () => dispatcher.poke(),
    isDead: () => dead,
    onError: report,
    track,
  });
  cluster = wired.cluster;
  // The row before any grant: a running row whose owner has no heartbeat row
  // reads as a boot that stopped on purpose (no_beat), and another node would
  // take a live boot's first runs. A failed write is reported; the child's
  // beats retry it.
  await track(
    beat(db, {
      owner,
      nodeId: o.nodeId,
      now: new Date(now()),
      bootLock: beats.holdsBootLock(),
    }),
  ).catch(report);
  const { liveness, mayAdopt, leader } = wired;
  const booted = new BootSignal(boardLoaded);
  const reconciler = reconcilerLogic({
    db,
    backend,
    owner,
    now,
    liveness,
    runnerImage: o.runnerImage,
    lock: o.reconcileLock,
    leader,
    // A follower's boot is covered by the leader: `booted` says so with an empty report.
    onFollow: () =>
      booted.passed({ repinned: [], adopted: [], failed: [], removedHandles: [], repaired: [] }),
    clock,
    passTimeoutMs: o.passTimeoutMs,
    track,
    liveRunners: ours,
    // After the board has its cards: an adopted run's output goes onto its card from the first line.
    runAdopted: (s) => boardLoaded.then(() => starter.adoptFenced(s)),
    submit: (op) => dispatcher.submit(op),
    repair: () => repairDispatch(db),
    vacuum: () => vacuumDispatch(db),
    poke: () => dispatcher.poke(),
    stopRunner: (sessionId) => {
      starter.tell(sessionId, { type: 'roundtable.runner.cancel' });
    },
    onError: report,
    onGiveUp: (reason) => metrics.gaveUp(reason),
    onPass: (passReport, pass) => {
      if (dead) return;
      // The first boot pass that ran settles `booted`.
      if (pass.boot && passReport !== null) booted.passed(passReport);
    },
  });

  let exitedResolve: (exit: RuntimeExit) => void = () => {};
  const exited = new Promise<RuntimeExit>((resolve) => {
    exitedResolve = resolve;
  });
  /** Set by `stop()` / `kill()` before the root goes down: any other exit is the root giving up. */
  let ending: RuntimeEnding | undefined;
  const shutDownShell = () => {
    dead = true;
    dispatcher.stop();
    feed.stop();
    engine.stop();
    board.close();
  };

  root = await startSupervisor(
    {
      id: 'root',
      strategy: 'one_for_one',
      children: [
        { id: POOL, start: { logic: runnerPoolMachine, input: { onDown: onHolderDown } } },
        { id: RUNNERS, start: { supervisor: { children: [], intensity: 20, periodMs: 5_000 } } },
        { id: 'heartbeat', start: { logic: heartbeat } },
        { id: 'reconciler', start: { logic: reconciler, input: { periodMs: o.reconcileMs } } },
      ],
    },
    { clock, onError: report, ...(o.inspect ? { inspect: o.inspect } : {}) },
  );
  const top = root;
  await feed.start(startTick);
  dispatcher.poke();

  // The root gives up when its children crash faster than its intensity:
  // it stops them all and exits, and nothing above restarts it. Tell it.
  let crashes = NO_CRASHES;
  top.subscribe((event) => {
    crashes = noteRootEvent(crashes, event, top.id);
  });
  top.onExit((reason) => {
    const exit = classifyExit(ending, reason, crashes);
    if (exit.kind === 'gave_up') shutDownShell();
    booted.ended(exit);
    exitedResolve(exit);
  });

  const tree = new TreeWatch({
    root: top,
    runnersId: RUNNERS,
    poolId: POOL,
    runners: starter,
    onRestart: () => metrics.restarted(),
    isDead: () => dead,
  });

  const commands = runtimeCommands({
    submit: (op) => dispatcher.submit(op),
    readTask: (actor, taskId) =>
      actor === null ? getTask(db, taskId) : getTaskForUser(db, actor, taskId),
    readSessions: (taskId) => listSessionsForTask(db, taskId),
    cancelRunner: (sessionId) => starter.tell(sessionId, { type: 'roundtable.runner.cancel' }),
    removeRun: (run) => backend.remove(run),
    requestPass: () => {
      const ref = top.child('reconciler');
      return ref === undefined ? undefined : requestPass(ref);
    },
    isDead: () => dead,
    ending: () => ending,
    onError: report,
  });

  let stopping: Promise<void> | undefined;
  const runtime: Runtime = {
    owner,
    root: top,
    booted: booted.promise,
    exited,
    cards: (userId) => board.cards(userId),
    subscribe: (listener) => board.subscribe(listener),
    ...commands,
    line: board.line,
    poolSnapshot: () => lines.snapshot(o.caps.maxRunning),
    sessionOutput: (userId, sessionId) => getSessionOutput(db, { userId, sessionId }),
    taskDetail: (actor, taskId) => getTaskRecord(db, { actor, taskId }),
    taskOutput: (actor, taskId, sessionId) => getTaskOutput(db, { actor, taskId, sessionId }),
    metrics: () => metrics.snapshot(lines.snapshot(o.caps.maxRunning)),
    health: () => ({
      engine: engine.available() ? 'available' : 'unavailable',
      notifications: feed.listening ? 'listening' : 'polling',
      tick: feed.seenTick(),
      holding: dispatcher.holding(),
      backlog: dispatcher.backlog(),
      lock: cluster?.self() ?? 'none',
      reconciler: leader?.state() ?? 'none',
    }),
    async clusterNodes() {
      const [nodes, owned] = await Promise.all([
        cluster?.nodes() ?? Promise.resolve([]),
        runningByOwner(db),
      ]);
      return nodes.map((n) => ({ ...n, sessionsOwned: owned.get(n.owner) ?? 0 }));
    },
    lineStatus: (headSize) => readLineStatus(db, headSize),
    activity: ({ minutes, at }) => readActivity(db, { minutes, at: at ?? new Date(now()) }),
    onSupervisorEvent: (listener) => tree.subscribe(listener),
    liveRunners: () => [...starter.live()],
    busy: () => inFlight.count(),
    stop() {
      stopping ??= (async () => {
        ending ??= 'stop';
        await top.shutdown();
        shutDownShell();
        // Stopped on purpose: other nodes need not wait out the staleness
        // window to adopt the runs this boot leaves behind.
        // A store that is down by now only costs them the window: reported.
        await endBeat(db, { owner }).catch(o.onError);
        // The leader lock first: a follower leads at once.
        await leader?.release().catch(o.onError);
        await cluster?.stop().catch(o.onError);
      })();
      return stopping;
    },
    kill() {
      ending ??= 'kill';
      leader?.drop();
      cluster?.kill();
      shutDownShell();
      top.kill();
    },
  };
  return runtime;
}
