/**
 * Brings a node up: claim the data directory, open and migrate the store,
 * open the container backend, start the runtime's supervision tree, and add
 * the UI server to it as a permanent child. Whatever step fails, the steps
 * before it are undone, so a failed start leaves no process half alive.
 */
import { createRuntime } from '../actors/runtime.js';
import type { TickNotifications } from '../actors/runtimeFeed.js';
import type { Runtime, RuntimeCard } from '../actors/runtimeTypes.js';
import type { SimulatedCluster } from '../containers/simulated/SimulatedCluster.js';
import { type DbHandle, readEnforcedCaps } from '../db/index.js';
import { systemClock } from '../supervisor/clock.js';
import type { UiServer } from '../ui-server/createUiServer.js';
import { createInspector } from '../ui-server/inspector/createInspector.js';
import { BackgroundLog } from './backgroundLog.js';
import { type BoardTokens, loadBoardTokens } from './boardTokens.js';
import { capsNotice } from './capsInForce.js';
import type { CliConfig } from './cliConfig.js';
import type { CommandContext } from './commandContext.js';
import { CliError, NodeGaveUpError } from './exitCodes.js';
import { claimNodeFile } from './nodeFile.js';
import { type BackendDecision, openBackend } from './openBackend.js';
import { describeStore, openStore, sessionRefusal, storeErrorsTo } from './openStore.js';
import { readStatus } from './statusReport.js';
import { uiServerChild } from './uiServerChild.js';
import { withProgress } from './withProgress.js';

/** How long the board may take to listen (it bundles its page first). */
const UI_READY_MS = 30_000;
/** How long `start` waits for the first Reconciler pass before it goes on without it. */
const BOOT_SWEEP_MS = 60_000;

/**
 * The runtime's retention from the CLI's: 0 keeps finished work for ever.
 *
 * @example
 * ```ts
 * retention({ retentionMs: 3600000 }) // => 3600000
 * retention({ retentionMs: 0 }) // => null
 * ```
 */
export function retention(config: Pick<CliConfig, 'retentionMs'>): number | null {
  return config.retentionMs === 0 ? null : config.retentionMs;
}

/** The heartbeat options that make a node's beat vouch for `deadAfterMs`: five beats. */
function beatWindow(deadAfterMs: number): {
  heartbeatMs: number;
  heartbeatStaleBeats: number;
} {
  return { heartbeatMs: Math.max(1, Math.round(deadAfterMs / 5)), heartbeatStaleBeats: 5 };
}

/**
 * Watching the beats when no boot holds a lock: the rows read every tenth of
 * the window, between 250 ms and a second.
 */
function beatsWatch(deadAfterMs: number) {
  return {
    watchBeats: true,
    ...beatWindow(deadAfterMs),
    livenessPollMs: Math.min(1_000, Math.max(250, Math.round(deadAfterMs / 10))),
  };
}

/**
 * Behind a transaction pooler no boot holds a lock, so a death is a beat
 * gone stale, watched for on the rows: by default beats every 2 s, stale
 * after 5 (10 s, so a thread held a few seconds by a large board load or a
 * long collection still beats in time), the rows read every second. Without
 * the watch a death waited for the next periodic pass, up to `reconcileMs`
 * (a minute) after three default beats (another minute).
 */
export const POOLED_DEAD_AFTER_MS = 10_000;

/** The runtime's liveness options as `liveness` gives them. */
export type LivenessOptions<S> = {
  bootLock?: S;
  reconcileLock?: boolean;
  watchBeats?: boolean;
  heartbeatMs?: number;
  heartbeatStaleBeats?: number;
  livenessPollMs?: number;
};

/**
 * The cluster-liveness options: each boot's lock on a Postgres server (off
 * behind a pooler), the one-Reconciler lock, which PGlite's single
 * connection cannot take, nor a transaction pooler's borrowed one hold, and
 * the beats' window (`--dead-after-ms`). A node with no lock to be judged by
 * (behind a pooler, or `--boot-lock off` with a window given) is watched on
 * its beats; each row carries its own window, so nodes that differ in it
 * (a rolling deploy that changes it) judge each other right.
 *
 * @example
 * ```ts
 * const base = { bootLock: 'auto', reconcileLock: 'auto', pooler: 'none' } as const;
 * const server = { engine: 'postgres' } as const;
 * liveness(base, server) // => { bootLock: server }
 * liveness({ ...base, deadAfterMs: 30000 }, server) // => { bootLock: server, heartbeatMs: 6000, heartbeatStaleBeats: 5 }
 * liveness({ ...base, pooler: 'transaction' }, server).heartbeatMs // => 2000
 * liveness({ ...base, pooler: 'transaction', deadAfterMs: 30000 }, server).heartbeatMs // => 6000
 * liveness({ ...base, bootLock: 'off', deadAfterMs: 5000 }, server) // => { watchBeats: true, heartbeatMs: 1000, heartbeatStaleBeats: 5, livenessPollMs: 500 }
 * liveness({ ...base, bootLock: 'off' }, server) // => {}
 * ```
 */
export function liveness<S extends Pick<DbHandle, 'engine'>>(
  config: Pick<CliConfig, 'bootLock' | 'reconcileLock' | 'pooler' | 'deadAfterMs'>,
  store: S,
): LivenessOptions<S> {
  if (config.reconcileLock === 'on' && store.engine === 'pglite')
    throw new CliError(
      'CLI_CONFIG',
      '--reconcile-lock on needs a Postgres server (PGlite has one connection: a node on it is alone)',
    );
  const dead = config.deadAfterMs;
  if (config.pooler === 'transaction') {
    // Taken on a pooled server connection, the lock would outlive its node
    // there and no Reconciler would run again anywhere.
    if (config.reconcileLock === 'on')
      throw new CliError(
        'CLI_CONFIG',
        '--reconcile-lock on cannot work behind a transaction pooler: a session lock stays on the pooled server connection that took it (leave it auto: every node runs its passes, whose writes are compare-and-sets)',
      );
    return { reconcileLock: false, ...beatsWatch(dead ?? POOLED_DEAD_AFTER_MS) };
  }
  const reconcileLock =
    config.reconcileLock === 'auto' ? {} : { reconcileLock: config.reconcileLock === 'on' };
  if (config.bootLock === 'off') return { ...reconcileLock, ...(dead ? beatsWatch(dead) : {}) };
  // The lock sees a crash at once; the beats are the backstop for a wedged node.
  return { bootLock: store, ...reconcileLock, ...(dead ? beatWindow(dead) : {}) };
}

/** The store's LISTEN as the runtime's feed asks for it (the handle's other parts stay here). */
function listenOn(store: DbHandle): TickNotifications {
  return {
    listen: (channel, onPayload, onState) => store.listen(channel, onPayload, onState),
    probeSession: store.probeSession,
  };
}

export interface RunningNode {
  readonly runtime: Runtime;
  readonly cluster: SimulatedCluster | null;
  readonly tokens: BoardTokens;
  /** `http://host:port` of the board. */
  readonly url: string;
  /** One line per fact, for the banner. */
  readonly backendDescription: string;
  /** Which backend and why. */
  readonly backend: BackendDecision;
  readonly storeDescription: string;
  /** Rejects with `NodeGaveUpError` when the tree gives up on its own (`runtime.exited`; never after `stop`). */
  readonly failed: Promise<never>;
  /** Stops the tree (UI server first), closes the store, releases the data directory. Idempotent. */
  stop(): Promise<void>;
}

export async function startNode(
  ctx: CommandContext,
  options: { users?: readonly string[] } = {},
): Promise<RunningNode> {
  const { config, logger } = ctx;
  const undo: Array<() => Promise<void> | void> = [];
  const unwind = async () => {
    for (const step of undo.reverse()) {
      try {
        await step();
      } catch (error) {
        logger.warn({ err: error }, 'cleanup after a failed start failed');
      }
    }
  };
  try {
    const claim = claimNodeFile(config.dataDir, config.databaseUrl ? 'postgres' : 'pglite');
    undo.push(() => claim.release());
    const users = [...new Set([...config.users, ...(options.users ?? [])])];
    const tokens = loadBoardTokens(config.dataDir, config.tokens, users);
    const connected: DbHandle = (
      await openStore(config, ctx.progress, { onPoolError: storeErrorsTo(logger) })
    ).handle;
    undo.push(() => connected.close());
    if (connected.settingsNotInForce.length > 0)
      logger.warn(
        { settings: connected.settingsNotInForce },
        'the server does not hold the deadlines this node sent at connect (a pooler dropped them): the role’s settings apply; set them on the role (docs/operations.md)',
      );
    // Said as a step of its own: behind a pooler that drops the startup
    // settings the answer takes the probe's whole deadline (5 s).
    const probe = connected.probeSession;
    if (probe !== null)
      await withProgress('checking that its connections are sessions', probe, ctx.progress).catch(
        (error: unknown) => {
          throw sessionRefusal(error);
        },
      );
    // Probed: createRuntime need not ask again.
    const store: DbHandle = { ...connected, probeSession: null };
    const notice = capsNotice(await readEnforcedCaps(store.db), config.caps);
    if (notice !== null) logger.warn({ caps: config.caps }, notice);
    const before = await readStatus(store.db, 'rows', config.caps);
    if (before.queued + before.running > 0) {
      logger.info(
        { queued: before.queued, running: before.running },
        'resuming from the rows: waiting sessions keep their place, running ones are adopted or re-queued',
      );
    }
    const opened = await openBackend(config, ctx.origins?.backend ?? 'the configuration');
    undo.push(() => opened.close());
    // The supervision events reach it always; the actors' frames only while a viewer is connected.
    const inspector = createInspector({ logger: logger.child({ component: 'inspector' }) });
    undo.push(() => inspector.close());
    const background = new BackgroundLog(logger);
    const runtime = await createRuntime({
      inspect: inspector.gate,
      db: store.db,
      // Other nodes' ticks arrive as NOTIFY (a poll covers a lost listener);
      // behind a transaction pooler the poll alone (a LISTEN would stay on a
      // pooled server connection and its notifications reach other clients).
      ...(config.pooler === 'transaction' ? {} : { notifications: listenOn(store) }),
      backend: opened.backend,
      clock: systemClock,
      caps: config.caps,
      pollMs: config.pollMs,
      adoptBudgetMs: config.adoptBudgetMs,
      reconcileMs: config.reconcileMs,
      retentionMs: retention(config),
      defaultTimeLimitMs: config.defaultTimeLimitMs === 0 ? null : config.defaultTimeLimitMs,
      ...liveness(config, store),
      nodeId: config.nodeId,
      ...(config.runnerImage ? { runnerImage: config.runnerImage } : {}),
      onError: (error) => background.report(error),
    });
    undo.push(() => runtime.stop());
    logCards(runtime, ctx);
    logSupervision(runtime, ctx);
    await bootSweep(runtime, ctx);

    let server: UiServer | undefined;
    undo.push(() => server?.close());
    const uiLogger = logger.child({ component: 'ui-server' });
    const ready = new Promise<UiServer>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new CliError('CLI_NODE', `the board did not listen within ${UI_READY_MS} ms`)),
        UI_READY_MS,
      );
      const logic = uiServerChild({
        options: () => ({
          source: runtime,
          commands: withBackendHealth(runtime, opened.decision),
          tokens: { admin: tokens.admin, users: tokens.users },
          // After the first listen the port is fixed, so a restart keeps the printed URLs right.
          port: server?.port ?? config.port,
          host: config.host,
          logger: uiLogger,
          inspector,
        }),
        onListening: (s) => {
          if (server !== undefined) uiLogger.warn({ url: s.url }, 'board restarted');
          server = s;
          clearTimeout(timer);
          resolve(s);
        },
        onStartFailed: (error) => {
          // A port in use (or not ours to take) is the user's to fix, not a bug: its
          // one line says it all, without the stack of every incarnation that tried.
          const listen = error as NodeJS.ErrnoException;
          if (listen.syscall === 'listen') {
            uiLogger.error(
              { code: listen.code, reason: listen.message },
              'the board could not start',
            );
          } else {
            uiLogger.error({ err: error }, 'the board could not start');
          }
          clearTimeout(timer);
          reject(
            new CliError(
              'CLI_NODE',
              `the board could not listen on ${config.host}:${config.port}: ${(error as Error).message}`,
              {
                cause: error,
              },
            ),
          );
        },
        onCloseFailed: (error) => uiLogger.warn({ err: error }, 'closing the board failed'),
      });
      runtime.root
        .startChild({ id: 'uiServer', restart: 'permanent', start: { logic } })
        .catch((error: unknown) => {
          clearTimeout(timer);
          reject(error);
        });
    });
    const first = await ready;
    claim.setUrl(first.url);

    let stopping: Promise<void> | undefined;
    const failed = new Promise<never>((_, reject) => {
      void runtime.exited.then((exit) => {
        if (exit.kind === 'gave_up' && stopping === undefined) reject(new NodeGaveUpError(exit));
      });
    });
    failed.catch(() => undefined);
    return {
      runtime,
      cluster: opened.cluster,
      tokens,
      url: first.url,
      backendDescription: opened.description,
      backend: opened.decision,
      storeDescription: describeStore(config),
      failed,
      stop() {
        stopping ??= (async () => {
          await runtime.stop();
          opened.close();
          await server?.close();
          inspector.close();
          await store.close();
          claim.release();
        })();
        return stopping;
      },
    };
  } catch (error) {
    await unwind();
    throw error;
  }
}

/** The runtime as the board's commands, its health saying which backend runs the work and why. */
function withBackendHealth(runtime: Runtime, backend: BackendDecision): Runtime {
  return { ...runtime, health: () => ({ ...runtime.health(), backend }) };
}

/** One info line per card that changes column or status: the terminal tells the board's story. */
function logCards(runtime: Runtime, ctx: CommandContext): void {
  const last = new Map<string, string>();
  for (const card of runtime.cards(null)) last.set(card.taskId, stateOf(card));
  const log = ctx.logger.child({ component: 'board' });
  // Passive: a log, not a screen (the node is not watched for it).
  runtime.subscribe(
    (card) => {
      const now = stateOf(card);
      const before = last.get(card.taskId);
      if (before === now) return;
      last.set(card.taskId, now);
      log.info(
        {
          task: card.taskId,
          user: card.userId,
          attempt: card.attempt,
          ...(card.queued ? { position: card.queued.position } : {}),
          ...(card.failure ? { reason: card.failure.reason } : {}),
          ...(card.exitCode !== null ? { exit: card.exitCode } : {}),
        },
        `${card.title}: ${before ?? 'new'} → ${now}`,
      );
    },
    {
      passive: true,
      // Past retention: the card left the board, and the log's memory of it goes too.
      onRemoved: (taskIds) => {
        for (const id of taskIds) last.delete(id);
      },
    },
  );
}

function stateOf(card: RuntimeCard): string {
  return card.status === 'queued' ? 'queued' : card.status;
}

function logSupervision(runtime: Runtime, ctx: CommandContext): void {
  const log = ctx.logger.child({ component: 'supervisor' });
  runtime.onSupervisorEvent((event) => {
    if (event.type === 'roundtable.child.restarting') log.warn(event, 'restarting a child');
    else if (event.type === 'roundtable.supervisor.intensity_reached')
      log.error(event, 'restart intensity reached');
    else log.debug(event, event.type);
  });
}

/**
 * Waits for the Reconciler's boot pass (`runtime.booted`, no extra pass) with
 * a progress line: on Swarm it observes every orphaned run, which can take a
 * while. Past its deadline, or if it fails (a failed boot pass is retried at
 * the next period, so `booted` waits on), the node comes up anyway.
 */
async function bootSweep(runtime: Runtime, ctx: CommandContext): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), BOOT_SWEEP_MS);
  });
  try {
    const outcome = await withProgress(
      'boot sweep',
      () => Promise.race([runtime.booted.then(() => 'done' as const), deadline]),
      ctx.progress,
      (o) =>
        o === 'late' ? `still running after ${BOOT_SWEEP_MS} ms; going on` : 'rows and runs agree',
    );
    if (outcome === 'late') ctx.logger.warn('the boot sweep is slow; it goes on in the background');
  } catch (error) {
    ctx.logger.warn(
      { err: error },
      'the boot sweep failed; the Reconciler tries again on its next tick',
    );
  } finally {
    clearTimeout(timer);
  }
}
