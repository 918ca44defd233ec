/**
 * The board without a listener: the request and upgrade handlers of the UI
 * server, guarded (listenerGuard.ts), with the connection limits and the
 * auth ladder, for `createUiServer` to listen with or for an app to mount on
 * its own server. The upgrade is a flat ladder of guards (404, 400, 401, 503,
 * 429), each rejection written as a status line before the socket is
 * destroyed, so unauthenticated clients never become WebSocket connections.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { pino } from 'pino';
import { WebSocketServer } from 'ws';
import { SUBPROTOCOL } from '../board/boardProtocol.js';
import { createAuthenticator, tokenOf } from './authenticate.js';
import { BoardHub } from './boardHub.js';
import { createBoardMetrics } from './boardMetrics.js';
import { BoardStats, DURATIONS_KEPT, SAMPLE_MS } from './boardStats.js';
import { closeWithGrace } from './closeWithGrace.js';
import { ConnectionLimiter } from './connectionLimiter.js';
import { handleHttp, isBoardPath } from './httpApi.js';
import type { Inspector } from './inspector/createInspector.js';
import {
  guardRequest,
  guardUpgrade,
  rejectUpgrade,
  requestPath,
  requestUrl,
  UiRequestError,
} from './listenerGuard.js';
import { LISTENER_LIMIT_KEYS } from './listenerLimits.js';
import { OutputReadGate } from './outputReadGate.js';
import { chartEngineScript, pageScript } from './pageBundle.js';
import {
  resolveUiServerOptions,
  UiServerConfigError,
  type UiServerLimits,
  type UiServerLogger,
  type UiServerOptions,
} from './uiServerOptions.js';

/**
 * Options of a board with no listener of its own: those of `createUiServer`
 * but `port`, `host` and the listener's limits (`LISTENER_LIMIT_KEYS`, which
 * `mountUiServer` refuses: they are the app's server's to apply).
 */
export type MountOptions = Omit<UiServerOptions, 'port' | 'host'> & {
  /** Mounts the inspector (docs/inspector.md): `/inspect`, its script, the admin topic `/inspect/ws`. */
  inspector?: Inspector;
};

/** The board mounted on a server it does not own. */
export interface MountedUiServer {
  /**
   * Answers a request on one of the board's paths (`/`, `/board.js`,
   * `/healthz`, `/readyz`, `/metrics`, `/api/...`, and `/inspect...` with an inspector)
   * and returns true; any other path, or a target that is not a URL path, is
   * left to the app (false, nothing written).
   */
  handleRequest(req: IncomingMessage, res: ServerResponse): boolean;
  /** The same for an `upgrade`: `/ws` (and `/inspect/ws`) are the board's, anything else false. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** Runs one heartbeat round now (tests; the clock runs it every `heartbeatMs`). */
  heartbeat(): void;
  /** Open WebSocket connections. */
  connections(): number;
  /** Closes the board's sockets (1001) and timers; the app's server and its connections stay. Idempotent. */
  close(): Promise<void>;
}

/** What `createUiServer` listens with: every path, the unknown ones answered 404. */
export interface BoardCore {
  serve(req: IncomingMessage, res: ServerResponse): void;
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  mounted: MountedUiServer;
  /** The options as resolved, for the listener's own logging and limits. */
  logger: UiServerLogger;
  limits: UiServerLimits;
  /** Counts a refusal on `/metrics`, for the listener's own (connection caps, timeouts). */
  refused(code: string): void;
}

/** The path, or null for a target that is not one (the app's to answer). */
function pathOf(req: IncomingMessage): string | null {
  try {
    return requestPath(req);
  } catch {
    return null;
  }
}

/** Builds the board's handlers. Rejects with `UiServerConfigError` or `PageBundleError`. */
export async function createBoardCore(options: MountOptions): Promise<BoardCore> {
  const { inspector, ...serverOptions } = options;
  // Port and host are the listener's; a mounted board has none of its own.
  const opts = resolveUiServerOptions({ port: 0, host: '127.0.0.1', ...serverOptions }, () =>
    pino({ name: 'ui-server' }),
  );
  const { limits, logger } = opts;
  await Promise.all([pageScript(), chartEngineScript()]);
  const authenticate = createAuthenticator(opts.tokens);
  // Made before the inspector is attached, so its refusals are counted too.
  const metrics = createBoardMetrics(opts.commands, () => hub.stats());
  const refused = (code: string) => metrics.refused(code);
  const inspectorRoutes =
    inspector?.attach({ authenticate, board: opts.source, onRefusal: refused }) ?? null;
  const hub = new BoardHub({
    source: opts.source,
    userIds: Object.keys(opts.tokens.users),
    epoch: randomUUID(),
    limits,
    clock: opts.clock,
    logger,
  });
  // The dashboard's history and the estimates' durations, from the same cards the hub sends.
  const stats = new BoardStats();
  for (const card of opts.source.cards(null)) stats.observe(card, opts.clock.now());
  // Passive: counts, not a screen. Unwatched, other nodes' changes reach
  // them with this node's next tick or poll (BoardSource.watch).
  const unwatch = opts.source.subscribe((card) => stats.observe(card, opts.clock.now()), {
    passive: true,
  });
  // Runs that ended before this server started, from the rows: estimates
  // survive a deploy and agree across nodes. Not awaited: the board serves meanwhile.
  void opts.commands.recentRuns?.(DURATIONS_KEPT).then(
    (runs) => stats.seed(runs),
    (err: unknown) =>
      logger.warn({ err }, 'stats: the last runs could not be read; estimates count runs from now'),
  );
  const sampler = opts.clock.setInterval(
    () => stats.sample(opts.clock.now(), opts.commands.poolSnapshot()),
    SAMPLE_MS,
  );
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: limits.maxPayload,
    clientTracking: false,
    // Select the board protocol; never echo the bearer subprotocol (it holds the token).
    handleProtocols: (protocols) => (protocols.has(SUBPROTOCOL) ? SUBPROTOCOL : false),
  });
  const limiter = new ConnectionLimiter(limits);
  const outputReads = new OutputReadGate(limits.maxOutputReadsPerUser);
  let closing = false;

  const serve = guardRequest(
    (req, res) => {
      if (inspectorRoutes?.handleHttp(req, res)) return;
      return handleHttp(req, res, {
        commands: opts.commands,
        metrics,
        stats,
        authenticate,
        maxHttpBody: limits.maxHttpBody,
        outputReads,
        clock: opts.clock,
        connections: () => hub.stats().connections,
        logger,
      });
    },
    logger,
    refused,
  );

  const upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (inspectorRoutes?.handleUpgrade(req, socket, head)) return;
    const refuse = (status: number, code: string, message: string) => {
      refused(code);
      rejectUpgrade(socket, status, code, message);
    };
    if (requestPath(req) !== '/ws') return refuse(404, 'not_found', 'the board socket is at /ws');
    if (req.headers.upgrade?.toLowerCase() !== 'websocket') {
      return refuse(400, 'bad_request', 'only websocket upgrades');
    }
    const token = tokenOf(req);
    const principal = token === null ? null : authenticate(token);
    if (principal === null) return refuse(401, 'unauthorized', 'a valid bearer token is required');
    if (closing) return refuse(503, 'unavailable', 'server closing');
    const admitted = limiter.admit(principal, req.socket.remoteAddress);
    if (admitted instanceof UiRequestError) {
      return refuse(admitted.status, admitted.code, admitted.message);
    }
    // The place is given back when the TCP socket is gone, whichever way:
    // refused by ws (bad key), closed by either side, or cut.
    socket.once('close', admitted);
    // A subscribe in the URL is served without waiting for the client's first
    // message (the page's early socket sends it so: docs/board-protocol.md).
    const firstFrame = requestUrl(req).searchParams.get('subscribe');
    wss.handleUpgrade(req, socket, head, (ws) => hub.attach(ws, principal, firstFrame));
  };

  const guardedUpgrade = guardUpgrade(upgrade, logger, refused);
  const inspects = (path: string) => inspectorRoutes !== null && path.startsWith('/inspect');

  let closed: Promise<void> | null = null;
  const mounted: MountedUiServer = {
    handleRequest(req, res) {
      const path = pathOf(req);
      if (path === null || !(isBoardPath(path) || inspects(path))) return false;
      serve(req, res);
      return true;
    },
    handleUpgrade(req, socket, head) {
      const path = pathOf(req);
      if (path !== '/ws' && !(path !== null && inspects(path))) return false;
      guardedUpgrade(req, socket, head);
      return true;
    },
    heartbeat: () => hub.heartbeat(),
    connections: () => hub.stats().connections,
    close() {
      if (closed === null) {
        closing = true;
        unwatch();
        opts.clock.clearInterval(sampler);
        // Sockets that have not answered their close frame by the grace are cut.
        closeWithGrace(
          inspectorRoutes === null ? [hub] : [hub, inspectorRoutes],
          opts.clock,
          limits.closeGraceMs,
        );
        closed = new Promise<void>((resolve) => wss.close(() => resolve()));
      }
      return closed;
    },
  };
  return { serve, upgrade: guardedUpgrade, mounted, logger, limits, refused };
}

/**
 * The board and inspector as handlers for an app's own `node:http` server:
 *
 * @example
 * ```ts
 * const board = await mountUiServer({ source: runtime, commands: runtime, tokens });
 * const app = createServer((req, res) => { if (!board.handleRequest(req, res)) appRoutes(req, res); });
 * app.on('upgrade', (req, socket, head) => { if (!board.handleUpgrade(req, socket, head)) socket.destroy(); });
 * ```
 */
export async function mountUiServer(options: MountOptions): Promise<MountedUiServer> {
  // Silently ignored, they would promise a protection the app's server does not have.
  const listenerKey = LISTENER_LIMIT_KEYS.find((k) => options.limits?.[k] !== undefined);
  if (listenerKey !== undefined) {
    throw new UiServerConfigError(
      `limits.${listenerKey}`,
      "a mounted board has no listener: give the app's server httpServerOptions and capConnections (listenerLimits.ts)",
    );
  }
  return (await createBoardCore(options)).mounted;
}
