/**
 * A server for the inspector alone: its page and topic on their own port,
 * for a runtime without the board (and for the inspector's tests).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MAX_TIMER_MS } from '../../common/maxTimerMs.js';
import { createAuthenticator } from '../authenticate.js';
import { closeWithGrace } from '../closeWithGrace.js';
import { guardRequest, guardUpgrade, rejectUpgrade } from '../listenerGuard.js';
import { UI_SERVER_DEFAULTS } from '../uiServerOptions.js';
import type { Inspector } from './createInspector.js';
import { InspectorConfigError } from './inspectorOptions.js';

export interface InspectorServer {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

export interface InspectorServerOptions {
  inspector: Inspector;
  /** The admin token; user tokens may be listed so they are refused with 403, not 401. */
  tokens: { admin: string; users?: Record<string, string> };
  port: number;
  host: string;
  /**
   * When the server closes, how long a viewer may take to answer its close
   * frame before it is cut (default 1000, the board's `closeGraceMs`).
   */
  closeGraceMs?: number;
}

/** Listens; rejects with the listen error, or an `InspectorConfigError` naming a bad option. */
export async function startInspectorServer(o: InspectorServerOptions): Promise<InspectorServer> {
  const closeGraceMs = o.closeGraceMs ?? UI_SERVER_DEFAULTS.closeGraceMs;
  if (!Number.isInteger(closeGraceMs) || closeGraceMs < 1 || closeGraceMs > MAX_TIMER_MS) {
    throw new InspectorConfigError('closeGraceMs', `must be an integer from 1 to ${MAX_TIMER_MS}`);
  }
  const routes = o.inspector.attach({
    authenticate: createAuthenticator({ admin: o.tokens.admin, users: o.tokens.users ?? {} }),
  });
  // The inspector logs at warn only; a listener failure is worth that much too.
  const log = o.inspector.options.logger;
  const logger = { warn: log.warn.bind(log), error: log.warn.bind(log) };
  const server = createServer(
    guardRequest((req, res) => {
      if (routes.handleHttp(req, res)) return;
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ error: { code: 'not_found', message: 'the inspector is at /inspect' } }),
      );
    }, logger),
  );
  server.on(
    'upgrade',
    guardUpgrade((req, socket, head) => {
      if (routes.handleUpgrade(req, socket, head)) return;
      rejectUpgrade(socket, 404, 'not_found', 'the inspector topic is at /inspect/ws');
    }, logger),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = o.host.includes(':') ? `[${o.host}]` : o.host;
  let closed: Promise<void> | null = null;
  return {
    url: `http://${host}:${port}`,
    port,
    close() {
      closed ??= new Promise<void>((resolve, reject) => {
        // A viewer that never answers its close frame is cut after the
        // grace: ws would wait 30 s for it, and server.close() with it.
        closeWithGrace([routes], o.inspector.options.clock, closeGraceMs);
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
