/**
 * `createRuntime`: assembles a node's supervision tree (DESIGN.md)
 *
 *   root (one_for_one)
 *   ├── runnerPool            permanent  watches the holders of this node's slots (DOWN)
 *   ├── taskRunners           dynamic    one transient TaskRunner per granted session
 *   ├── heartbeat             permanent  this boot's node_heartbeats row, every heartbeatMs
 *   └── reconciler            permanent  boot pass + every reconcileMs
 *
 * beside the node's I/O shell (the dispatcher, the tick feed, the board:
 * src/actors/runtimeShell.ts). It only assembles: each part is a module of
 * its own (docs/runtime.md, "Its parts"). The rows decide everything, so
 * `kill()` (a deploy) loses nothing.
 */
import { readinessOf } from '../board/readiness.js';
import {
  endBeat,
  getTask,
  getTaskForUser,
  listSessionsForTask,
  PRUNE_BATCH,
  pingStore,
  pruneFinished,
  repairDispatch,
  storeClosedIn,
  vacuumDispatch,
} from '../db/index.js';
import { isTransientDbError } from '../db/transientErrors.js';
import { type Supervisor, startSupervisor } from '../supervisor/index.js';
import { reportError } from '../supervisor/Listeners.js';
import type { ClusterLiveness } from './clusterLiveness.js';
import { OwnerDownNotice, startClusterLiveness } from './clusterLivenessWiring.js';
import { cancelRunnersCancelledElsewhere, sweepFencedOut } from './fencedOutSweep.js';
import { reconcilerLogic, requestPass } from './reconciler.js';
import { emptyReport } from './reconcilerDeps.js';
import { runnerPoolMachine } from './runnerPool.js';
import { overdueGraceMs } from './runTimeLimit.js';
import { BootSignal } from './runtimeBooted.js';
import { runtimeCommands } from './runtimeCommands.js';
import { beatOnce, heartbeatLogic, staleAfterMs } from './runtimeHeartbeat.js';
import { holderDown } from './runtimeHolderDown.js';
import { InFlight } from './runtimeInFlight.js';
import { RuntimeMetrics } from './runtimeMetrics.js';
import { resolveRuntimeOptions } from './runtimeOptions.js';
import { runtimeQueries } from './runtimeQueries.js';
import { createShell } from './runtimeShell.js';
import { TreeEnd } from './runtimeStop.js';
import { nodeRunners } from './runtimeTaskRunners.js';
import { TreeWatch } from './runtimeTreeWatch.js';
import type { Runtime, RuntimeOptions } from './runtimeTypes.js';
import { StoreProbe } from './storeProbe.js';

const RUNNERS = 'taskRunners';
const POOL = 'runnerPool';

/** Starts a node. Resolves once the tree is up (the boot pass runs in the background). */
export async function createRuntime(options: RuntimeOptions): Promise<Runtime> {
  const o = resolveRuntimeOptions(options);
  const { db, backend, clock } = o;
  const owner = `${o.nodeId}@${o.bootId}`;
  const now = () => clock.now();
  const { retentionMs } = o;
  /** Work that ended before this (epoch ms) is past retention; undefined: all is kept. */
  const retainedSince = () => (retentionMs === null ? undefined : now() - retentionMs);
  const isTransient = o.isTransient ?? isTransientDbError;
  let root: Supervisor | undefined;
  /** Set once the boot lock's first attempt is over (src/actors/clusterLiveness.ts). */
  let cluster: ClusterLiveness | undefined;
  let dead = false;
  let endAsked = false; // by stop() or kill(), before the tree is told
  // Before anything listens or takes a lock: behind a pooler that accepts
  // the startup settings neither would work, and nothing else would say so.
  await probeSessions([o.bootLock?.probeSession, o.notifications?.probeSession]);
  const metrics = new RuntimeMetrics();
  const inFlight = new InFlight();
  const { track } = inFlight;
  // An onError that throws is the app's bug: it surfaces as uncaught, on a
  // microtask (as the supervisor's does), never inside the runner, tick,
  // timer or listener guard that was reporting.
  // A store closed under a running node (the app closed it before stop())
  // fails every tick, beat and pass from then on, and stop()'s own writes:
  // the first says it, with its class and code; the rest would only flood
  // the app's log.
  let toldClosed = false;
  const tell = (error: unknown) => {
    if (storeClosedIn(error) !== null) {
      if (toldClosed) return;
      toldClosed = true;
    }
    reportError(o.onError, error);
  };
  const report = (error: unknown) => {
    if (!dead) tell(error);
  };

  const shell = createShell({
    o,
    owner,
    isTransient,
    mayGrant: () => cluster?.canGrant() ?? false,
    onTicked: (t) => metrics.ticked(t),
    onGranted(grant) {
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
    // A cancel made through another node, or by the CLI, stops the run here
    // as soon as the feed brings its row, not at the next heartbeat: a run
    // whose container the canceller cannot reach (another machine's engine,
    // local processes) would otherwise go on working for up to a beat.
    onChangedElsewhere(sessions) {
      if (dead) return;
      const rows = new Map<string, { epoch: number; status: string }>();
      for (const { session } of sessions)
        if (session.status === 'cancelled') rows.set(session.id, session);
      if (rows.size > 0)
        cancelRunnersCancelledElsewhere(
          { starter, heldEpoch: (id) => dispatcher.heldEpoch(id) },
          rows,
        );
    },
    isDead: () => dead,
    report,
    track,
  });
  const { lines, board, engine, dispatcher, feed, watch } = shell;
  const runners = (): Supervisor | undefined => root?.childSupervisor(RUNNERS);

  const starter = nodeRunners({
    o,
    owner,
    isTransient,
    shell,
    metrics,
    pool: () => root?.child(POOL),
    runners,
    mayAdopt: (s) => mayAdopt(s),
    isDead: () => dead,
    report,
    track,
  });
  /**
   * Sessions this boot runs or is about to (granted, runner starting): the
   * Reconciler leaves them be. Not every session the dispatcher counts as
   * held: one whose runner is gone with no DOWN to release it (it crashed
   * before it held, under a supervisor that then gave up on it) would keep
   * its slot for ever; left out, step 2 adopts its run again.
   */
  const ours = (): Set<string> => {
    const live = starter.live();
    for (const id of starter.starting()) live.add(id);
    return live;
  };

  // From a promise, not called here: a backend whose remove throws instead of
  // rejecting is reported like a rejection (the callers' `.catch`), and a
  // cancel that was applied is not answered with the backend's error.
  const removeRun = (run: { sessionId: string; handle: string }): Promise<void> =>
    Promise.resolve().then(() => backend.remove(run));

  const onHolderDown = holderDown({
    heldEpoch: (sessionId) => dispatcher.heldEpoch(sessionId),
    drop: (sessionId) => dispatcher.drop(sessionId),
    hasRunner: (sessionId) => starter.has(sessionId),
    runnersSettled: () => runners()?.sync() ?? Promise.resolve(),
    submit: (op) => dispatcher.submit(op),
    removeRun,
    // A runner going down with the tree leaves its run for adoption, even one
    // that waits out its shutdown (test/supervisor/stopAllChildren.test.ts).
    isDead: () => dead || endAsked,
    track,
    onError: report,
  });

  await shell.prime();

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
  const heartbeat = heartbeatLogic({
    ...beats,
    track,
    onError: report,
    afterBeat: async () => {
      // Every node's board lets go of work past its retention on its own
      // clock (the leader's pass deletes the rows): a board is memory, and
      // each node's held every card it ever saw.
      const since = retainedSince();
      if (since !== undefined) board.evict(since);
      return sweepFencedOut({
        db,
        starter,
        heldEpoch: (sessionId) => dispatcher.heldEpoch(sessionId),
        drop: (sessionId) => dispatcher.drop(sessionId),
        onNotice: report,
      });
    },
  });
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
    watchBeats: o.watchBeats,
    reconcileLock: o.reconcileLock,
    liveness: o.liveness,
    beats,
    reconcilerRef: () => root?.child('reconciler'),
    poke: () => dispatcher.poke(),
    isDead: () => dead,
    onError: report,
    onNotice: (notice) => {
      if (notice instanceof OwnerDownNotice) metrics.ownerDown(notice.reason);
      report(notice);
    },
    track,
  });
  cluster = wired.cluster;
  // The row before any grant: a running row whose owner has no heartbeat row
  // reads as a boot that stopped on purpose (no_beat), and another node would
  // take a live boot's first runs. A failed write is reported; the child's
  // beats retry it.
  await track(beatOnce(beats)).catch(report);
  // The board fills in from the rows in the background: a node with a long
  // history takes work at once, and a row a tick returns meanwhile wins over
  // the older one the load read (isNewer). `booted` waits for it. After the
  // beat, so its reads and card building hold no beat up (runtime.bootOrder),
  // and after the node's first tick (below): started before it, its read of
  // every row queued ahead of that tick and its card building held the
  // thread the reply waited for (100,000 queued: the first tick answered
  // ~400 ms after createRuntime, ~330 of them behind the load).
  // A node stopped before its first tick settled loads nothing.
  let openBoard: (load: boolean) => void = () => {};
  const boardGate = new Promise<boolean>((resolve) => {
    openBoard = resolve;
  });
  const boardLoaded = boardGate
    .then((load) => (load ? track(board.loadAll(retainedSince())) : undefined))
    .catch(report);
  const { liveness, mayAdopt, leader } = wired;
  const booted = new BootSignal(boardLoaded);
  let bootDone = false;
  booted.promise.then(
    () => {
      bootDone = true;
    },
    () => undefined,
  );
  const storeProbe = new StoreProbe({ query: () => pingStore(db), clock });
  const reconciler = reconcilerLogic({
    db,
    backend,
    owner,
    now,
    liveness,
    overdueGraceMs: overdueGraceMs(o),
    runnerImage: o.runnerImage,
    lock: o.reconcileLock,
    leader,
    // A follower's boot is covered by the leader: `booted` says so with an empty report.
    onFollow: () => booted.passed(emptyReport()),
    clock,
    passTimeoutMs: o.passTimeoutMs,
    track,
    liveRunners: ours,
    // After the board has its cards: an adopted run's output goes onto its card from the first line.
    runAdopted: (s, limitMs) => boardLoaded.then(() => starter.adoptFenced(s, limitMs)),
    submit: (op) => dispatcher.submit(op),
    repair: () => repairDispatch(db),
    vacuum: () => vacuumDispatch(db),
    ...(retentionMs === null
      ? {}
      : {
          prune: async () =>
            (
              await pruneFinished(db, {
                before: new Date(now() - retentionMs),
                limit: PRUNE_BATCH,
              })
            ).length,
        }),
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
  await shell.start();
  void dispatcher.afterCurrentTick().then(() => openBoard(!dead));
  const end = new TreeEnd({
    root: top,
    shutDownShell: () => {
      dead = true;
      shell.stop();
    },
    endBeat: () => endBeat(db, { owner }),
    leader,
    cluster: () => cluster,
    onEnded: (exit) => booted.ended(exit),
    onError: tell,
  });

  const tree = new TreeWatch({
    root: top,
    runnersId: RUNNERS,
    poolId: POOL,
    runners: starter,
    onRestart: () => metrics.restarted(),
    isDead: () => dead,
    onError: report,
  });

  const commands = runtimeCommands({
    // A caller can act on `unavailable`, so its commands are answered in an outage.
    submit: (op) => dispatcher.command(op),
    readTask: (actor, taskId) =>
      actor === null ? getTask(db, taskId) : getTaskForUser(db, actor, taskId),
    readSessions: (taskId) => listSessionsForTask(db, taskId),
    cancelRunner: (sessionId) => starter.tell(sessionId, { type: 'roundtable.runner.cancel' }),
    removeRun,
    requestPass: () => {
      const ref = top.child('reconciler');
      return ref === undefined ? undefined : requestPass(ref);
    },
    isDead: () => dead,
    ending: () => end.ending(),
    onError: report,
    onSubmitted: (outcome) => metrics.submitted(outcome),
    defaultTimeLimitMs: o.defaultTimeLimitMs ?? null,
    isTransient,
  });

  const queries = runtimeQueries({
    db,
    board,
    watch,
    pool: () => lines.snapshot(o.caps.maxRunning),
    metrics,
    engine,
    feed,
    dispatcher,
    cluster: () => cluster,
    leader,
    now,
    isTransient,
  });
  const runtime: Runtime = {
    owner,
    root: top,
    booted: booted.promise,
    exited: end.exited,
    ...queries,
    ...commands,
    onSupervisorEvent: (listener) => tree.subscribe(listener),
    async readiness() {
      // A stopping node does not ask the store it is closing.
      const stopping = endAsked || dead || end.ending() !== undefined;
      return readinessOf({
        booted: bootDone,
        takingGrants: cluster?.canGrant() ?? false,
        store: stopping ? undefined : await storeProbe.check(),
        stopping,
      });
    },
    liveRunners: () => [...starter.live()],
    busy: () => inFlight.count(),
    stop: () => {
      endAsked = true;
      return end.stop();
    },
    kill: () => {
      endAsked = true;
      end.kill();
    },
  };
  return runtime;
}

/** Runs each distinct session probe once (the CLI hands the same handle's to both ports). */
async function probeSessions(
  probes: readonly ((() => Promise<void>) | null | undefined)[],
): Promise<void> {
  for (const probe of new Set(probes)) if (probe) await probe();
}
