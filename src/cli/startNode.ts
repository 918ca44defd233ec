/**
 * Brings a node up: claim the data directory, open and migrate the store,
 * open the container backend, start the runtime's supervision tree, and add
 * the UI server to it as a permanent child. Whatever step fails, the steps
 * before it are undone, so a failed start leaves no process half alive.
 */
import { createRuntime } from '../actors/runtime.js';
import type { TickNotifications } from '../actors/runtimeFeed.js';
import type { Runtime } from '../actors/runtimeTypes.js';
import type { SimulatedCluster } from '../containers/simulated/SimulatedCluster.js';
import { type DbHandle, readEnforcedCaps } from '../db/index.js';
import { systemClock } from '../supervisor/clock.js';
import type { UiServer } from '../ui-server/createUiServer.js';
import { createInspector } from '../ui-server/inspector/createInspector.js';
import { BackgroundLog } from './backgroundLog.js';
import { type BoardTokens, loadBoardTokens } from './boardTokens.js';
import { capsNotice } from './capsInForce.js';
import type { CommandContext } from './commandContext.js';
import { CliError, NodeGaveUpError } from './exitCodes.js';
import { claimNodeFile } from './nodeFile.js';
import { logCards, logSupervision } from './nodeLogs.js';
import { liveness, perAddressLimits, retention } from './nodeOptions.js';
import { type BackendDecision, openBackend } from './openBackend.js';
import { describeStore, openStore, sessionRefusal, storeErrorsTo } from './openStore.js';
import { readStatus } from './statusReport.js';
import { uiServerChild } from './uiServerChild.js';
import { withProgress } from './withProgress.js';

/** How long the board may take to listen (it bundles its page first). */
const UI_READY_MS = 30_000;
/** How long `start` waits for the first Reconciler pass before it goes on without it. */
const BOOT_SWEEP_MS = 60_000;

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
    const { tokens, revoked } = loadBoardTokens(config.dataDir, config.tokens, users);
    if (revoked.length > 0)
      logger.warn(
        { users: revoked },
        `no longer configured, so their board tokens no longer work: ${revoked.join(', ')} (their queued and running tasks still run; configure them again to restore the same URLs)`,
      );
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
          ...(config.perAddress === undefined
            ? {}
            : { limits: perAddressLimits(config.perAddress) }),
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
