/**
 * The UI server: the board's handlers (mountUiServer.ts) on Node's http
 * server of their own, one port for the page, the API and the sockets. Both
 * listeners are guarded: no request can throw out of them and end the
 * process (listenerGuard.ts), and the listener's connections are capped and
 * given deadlines to send their requests (listenerLimits.ts).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Inspector } from './inspector/createInspector.js';
import { capConnections, httpServerOptions } from './listenerLimits.js';
import { createBoardCore } from './mountUiServer.js';
import type { UiServerOptions } from './uiServerOptions.js';

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
 * Validates the options, bundles the page, and listens (to mount the board on
 * an app's own server instead, see `mountUiServer`). Rejects with
 * `UiServerConfigError` for bad options, `PageBundleError` if the page does
 * not build, or the listen error.
 */
export async function createUiServer(
  options: UiServerOptions & {
    /** Mounts the inspector (docs/inspector.md): `/inspect`, its script, the admin topic `/inspect/ws`. */
    inspector?: Inspector;
  },
): Promise<UiServer> {
  // The core validates port and host too, so a bad one is a UiServerConfigError before any listen.
  const { serve, upgrade, mounted, logger, limits, refused } = await createBoardCore(options);
  const { port: listenPort, host: listenHost } = options;
  const server = createServer(httpServerOptions(limits), serve);
  capConnections(server, limits, logger, refused);
  server.on('upgrade', upgrade);
  await new Promise<void>((resolve, rejectListen) => {
    server.once('error', rejectListen);
    server.listen(listenPort, listenHost, () => {
      server.off('error', rejectListen);
      resolve();
    });
  });
  server.on('error', (err) => logger.error({ err }, 'ui-server error'));
  const port = (server.address() as AddressInfo).port;
  const host = listenHost.includes(':') ? `[${listenHost}]` : listenHost;

  let closed: Promise<void> | null = null;
  return {
    url: `http://${host}:${port}`,
    wsUrl: `ws://${host}:${port}/ws`,
    port,
    heartbeat: () => mounted.heartbeat(),
    connections: () => mounted.connections(),
    close() {
      if (closed === null) {
        closed = mounted.close().then(
          () =>
            new Promise<void>((resolve, rejectClose) => {
              server.close((err) => (err ? rejectClose(err) : resolve()));
              server.closeAllConnections();
            }),
        );
      }
      return closed;
    },
  };
}
