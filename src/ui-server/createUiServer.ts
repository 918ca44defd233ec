/**
 * The UI server: Node's http server and a `ws` server on one port. The upgrade
 * is a flat ladder of guards (404, 400, 401, 503, 429), each rejection written
 * as a status line before the socket is destroyed, so unauthenticated clients
 * never become WebSocket connections. Both listeners are guarded: no request
 * can throw out of them and end the process (listenerGuard.ts).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { pino } from 'pino';
import { WebSocketServer } from 'ws';
import { SUBPROTOCOL } from '../board/boardProtocol.js';
import { createAuthenticator, tokenOf } from './authenticate.js';
import { BoardHub } from './boardHub.js';
import { createBoardMetrics } from './boardMetrics.js';
import { BoardStats, SAMPLE_MS } from './boardStats.js';
import { ConnectionLimiter } from './connectionLimiter.js';
import { handleHttp } from './httpApi.js';
import type { Inspector } from './inspector/createInspector.js';
import {
  guardRequest,
  guardUpgrade,
  rejectUpgrade,
  requestPath,
  UiRequestError,
} from './listenerGuard.js';
import { pageScript } from './pageBundle.js';
import { resolveUiServerOptions, type UiServerOptions } from './uiServerOptions.js';

/** A running UI server. */
export interface UiServer {
  /** `http://host:port` */
  readonly url: string;
  /** `ws://host:port/ws` */
  readonly wsUrl: string;
  readonly port: number;
  /** Runs one heartbeat round now (tests; the clock runs it every `heartbeatMs`). */
  heartbeat(): void;
  /** Open WebSocket connections. */
  connections(): number;
  /** Closes every socket (1001) and the listener. Idempotent. */
  close(): Promise<void>;
}

/**
 * Validates the options, bundles the page, and listens. Rejects with
 * `UiServerConfigError` for bad options, `PageBundleError` if the page does
 * not build, or the listen error.
 */
export async function createUiServer(
  options: UiServerOptions & {
    /** Mounts the inspector (docs/inspector.md): `/inspect`, its script, the admin topic `/inspect/ws`. */
    inspector?: Inspector;
  },
): Promise<UiServer> {
  const { inspector, ...serverOptions } = options;
  const opts = resolveUiServerOptions(serverOptions, () => pino({ name: 'ui-server' }));
  const { limits, logger } = opts;
  await pageScript();
  const authenticate = createAuthenticator(opts.tokens);
  const inspectorRoutes = inspector?.attach({ authenticate, board: opts.source }) ?? null;
  const hub = new BoardHub({
    source: opts.source,
    userIds: Object.keys(opts.tokens.users),
    epoch: randomUUID(),
    limits,
    clock: opts.clock,
    logger,
  });
  const metrics = createBoardMetrics(opts.commands, () => hub.stats());
  // The dashboard's history and the estimates' durations, from the same cards the hub sends.
  const stats = new BoardStats();
  for (const card of opts.source.cards(null)) stats.observe(card, opts.clock.now());
  const unwatch = opts.source.subscribe((card) => stats.observe(card, opts.clock.now()));
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
  let closing = false;

  const server = createServer(
    guardRequest((req, res) => {
      if (inspectorRoutes?.handleHttp(req, res)) return;
      return handleHttp(req, res, {
        commands: opts.commands,
        metrics,
        stats,
        authenticate,
        maxHttpBody: limits.maxHttpBody,
        connections: () => hub.stats().connections,
        logger,
      });
    }, logger),
  );

  const upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (inspectorRoutes?.handleUpgrade(req, socket, head)) return;
    const refuse = (status: number, code: string, message: string) =>
      rejectUpgrade(socket, status, code, message);
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
    wss.handleUpgrade(req, socket, head, (ws) => hub.attach(ws, principal));
  };
  server.on('upgrade', guardUpgrade(upgrade, logger));

  await new Promise<void>((resolve, rejectListen) => {
    server.once('error', rejectListen);
    server.listen(opts.port, opts.host, () => {
      server.off('error', rejectListen);
      resolve();
    });
  });
  server.on('error', (err) => logger.error({ err }, 'ui-server error'));
  const port = (server.address() as AddressInfo).port;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;

  let closed: Promise<void> | null = null;
  return {
    url: `http://${host}:${port}`,
    wsUrl: `ws://${host}:${port}/ws`,
    port,
    heartbeat: () => hub.heartbeat(),
    connections: () => hub.stats().connections,
    close() {
      if (closed === null) {
        closing = true;
        hub.close();
        unwatch();
        opts.clock.clearInterval(sampler);
        inspectorRoutes?.close();
        closed = new Promise<void>((resolve, rejectClose) => {
          wss.close();
          server.close((err) => (err ? rejectClose(err) : resolve()));
          server.closeAllConnections();
        });
      }
      return closed;
    },
  };
}
