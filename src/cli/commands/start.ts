/**
 * `roundtable start`: a node in the foreground until SIGINT or SIGTERM, then
 * an ordered stop (the tree in reverse start order, then the store) within
 * `shutdownMs`. The rows keep the queue, so the next start resumes it.
 */
import { userInfo } from 'node:os';
import { type BannerInfo, bannerLines, boardUrls } from '../banner.js';
import type { CommandContext } from '../commandContext.js';
import { CliError, EXIT, type ExitCode, NodeGaveUpError } from '../exitCodes.js';
import { type RunningNode, startNode } from '../startNode.js';

/** A terminal's Ctrl-C reaches us directly and again through npm and tsx: one press, several copies. */
const DUPLICATE_SIGNAL_MS = 1_000;
const PROBE_MS = 2_000;

export interface StartOptions {
  /** Users who get a token besides the configured ones. */
  users?: readonly string[];
  /** Runs once the node is up (the demo's workload); returns its own stop. */
  afterStart?: (node: RunningNode) => () => void;
}

export async function runStart(ctx: CommandContext, options: StartOptions = {}): Promise<ExitCode> {
  const { logger, io, config } = ctx;
  let firstSignalAt: number | undefined;
  let requestStop: (signal: string) => void = () => {};
  // The stop's deadline runs from the signal: one during a slow start (PGlite's
  // initdb, a store that stopped answering mid-boot, the 60 s wait for the boot
  // pass) must not wait for the start to finish before its `shutdownMs` begins.
  let deadline: StopDeadline | undefined;
  const stopRequested = new Promise<string>((resolve) => {
    requestStop = resolve;
  });
  // Listen before starting: a Ctrl-C during a slow first start must stop it cleanly too.
  const off = io.onSignal((signal) => {
    if (firstSignalAt === undefined) {
      firstSignalAt = Date.now();
      logger.info({ signal }, 'stopping (Ctrl-C again to end at once)');
      deadline = stopDeadline(ctx);
      requestStop(signal);
    } else if (Date.now() - firstSignalAt > DUPLICATE_SIGNAL_MS) {
      logger.warn({ signal }, 'second signal: ending now without a clean stop');
      io.exit(EXIT.interrupted);
    }
  });
  try {
    const starting = startNode(ctx, options.users ? { users: options.users } : {});
    const early = await Promise.race([starting.then(() => null), stopRequested]);
    const node = await starting;
    if (early !== null) {
      await stopWithin(ctx, node, deadline);
      logger.info('stopped');
      logOpenResources(ctx);
      return EXIT.ok;
    }
    const info: BannerInfo = {
      url: node.url,
      adminToken: node.tokens.admin,
      users: node.tokens.users,
      inspector: await answers(`${node.url}/inspect`),
      nodeId: config.nodeId,
      backend: node.backendDescription,
      store: node.storeDescription,
      backendReason: node.backend.reason,
      ...(node.backend.name === 'local' ? { runsAs: userInfo().username } : {}),
    };
    const urls = boardUrls(info);
    if (ctx.progress.isTTY) {
      // A person is watching: the banner says it all, the record only marks the moment.
      logger.info({ url: node.url }, 'ready');
      io.stdout.write(`\n${bannerLines(info).join('\n')}\n\n`);
    } else {
      logger.info(
        {
          url: node.url,
          board: urls.board,
          inspector: urls.inspector,
          users: urls.users,
          backend: node.backend,
          ...(info.runsAs ? { runsAs: info.runsAs } : {}),
        },
        'ready',
      );
    }
    const stopWorkload = options.afterStart?.(node);
    try {
      await Promise.race([stopRequested, node.failed]);
    } catch (error) {
      stopWorkload?.();
      // Fatal: nothing restarts a root. Logged first (the reason must reach
      // the operator even if the stop hangs), then the store is closed, then exit 5.
      logger.fatal(
        { err: error, ...(error instanceof NodeGaveUpError ? { exit: error.exit } : {}) },
        (error as Error).message,
      );
      await stopWithin(ctx, node, deadline);
      logger.info('stopped after a fatal error');
      logOpenResources(ctx);
      return error instanceof CliError ? error.exitCode : EXIT.node;
    }
    stopWorkload?.();
    await stopWithin(ctx, node, deadline);
    logger.info('stopped');
    logOpenResources(ctx);
    return EXIT.ok;
  } finally {
    deadline?.clear();
    off();
  }
}

/**
 * What the event loop still holds as the node has stopped, at `debug`
 * (`--log-level debug`): the listener's and the store's handles may still
 * be closing then; one that stays keeps the process up until src/cli/main.ts
 * ends it 2 s after `start` returns (it names what was still open).
 */
function logOpenResources(ctx: CommandContext): void {
  ctx.logger.debug({ activeResources: process.getActiveResourcesInfo() }, 'stopped: still open');
}

interface StopDeadline {
  clear(): void;
}

/** Ends the process with exit 6 once `shutdownMs` has passed, unless cleared first. */
function stopDeadline(ctx: CommandContext): StopDeadline {
  const timer = setTimeout(() => {
    ctx.logger.error({ shutdownMs: ctx.config.shutdownMs }, 'the stop took too long; ending now');
    ctx.io.exit(EXIT.stopTimeout);
  }, ctx.config.shutdownMs);
  return { clear: () => clearTimeout(timer) };
}

/** Stops the node within the deadline a signal started, or a new one (a fatal error's stop). */
async function stopWithin(
  ctx: CommandContext,
  node: RunningNode,
  started: StopDeadline | undefined,
): Promise<void> {
  const deadline = started ?? stopDeadline(ctx);
  try {
    await node.stop();
  } finally {
    deadline.clear();
  }
}

/** Whether a route exists (the inspector is optional in a build). */
async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(PROBE_MS) });
    await res.body?.cancel();
    return res.status !== 404;
  } catch {
    return false;
  }
}
