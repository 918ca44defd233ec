/**
 * The inspector's plug: an XState inspection observer to pass as `inspect`,
 * and routes a UI server mounts (`/inspect`, `/inspect.js`, and the
 * admin-only WebSocket topic at `/inspect/ws`).
 *
 * ```ts
 * const inspector = createInspector({})
 * const runtime = await createRuntime({ ..., inspect: inspector.observer })
 * const routes = inspector.attach({ authenticate })
 * // in the http handler:    if (routes.handleHttp(req, res)) return
 * // in the upgrade handler: if (routes.handleUpgrade(req, socket, head)) return
 * ```
 *
 * Both handlers throw `UiRequestError` (400 `bad_target`) for a request
 * target that is not a URL path; mount them inside `guardRequest` and
 * `guardUpgrade` (listenerGuard.ts), which answer it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { InspectionEvent } from 'xstate';
import type { BoardSource } from '../../board/boardPort.js';
import { InspectionGate } from '../../supervisor/inspectionGate.js';
import { type Principal, tokenOf } from '../authenticate.js';
import { htmlHeaders } from '../htmlHeaders.js';
import { type OnRefusal, rejectUpgrade, requestPath } from '../listenerGuard.js';
import { InspectionCollector } from './InspectionCollector.js';
import { InspectorHub } from './InspectorHub.js';
import { handleExitRoute } from './inspectorExitApi.js';
import {
  type InspectorOptions,
  type ResolvedInspectorOptions,
  resolveInspectorOptions,
} from './inspectorOptions.js';
import { INSPECTOR_HTML, inspectorElkScript, inspectorScript } from './inspectorPage.js';
import {
  INSPECT_ELK_PATH,
  INSPECT_EXIT_PATH,
  INSPECT_SUBPROTOCOL,
  INSPECT_WS_PATH,
} from './inspectorProtocol.js';
import { JobIndex } from './jobIndex.js';

/** The inspector page's Content-Security-Policy (htmlHeaders adds `frame-ancestors 'none'`). */
const INSPECTOR_CSP =
  "default-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self' ws: wss:";

/** What the routes need from the server they are mounted on. */
export interface InspectorMount {
  authenticate(token: string): Principal | null;
  /** The board, to name each TaskRunner by its job (title, user, link); optional. */
  board?: BoardSource;
  /** Hears the code of each viewer the inspector refuses (the board's `/metrics` count them). */
  onRefusal?: OnRefusal;
}

/** Handlers a server calls first; each returns true when the request was the inspector's. */
export interface InspectorRoutes {
  handleHttp(req: IncomingMessage, res: ServerResponse): boolean;
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** Refuses new viewers and closes the open ones. Idempotent. */
  close(): void;
  /** Cuts the viewers still open (after `close()`, those that never answered its close frame). */
  terminate(): void;
}

export interface Inspector {
  /**
   * Pass as `inspect` to startSupervisor or createRuntime: the supervision
   * events always, every actor's frames only while a viewer is connected
   * (the first viewer opens it and is shown every live actor as it is).
   */
  readonly gate: InspectionGate;
  /** Every frame always: pass as `inspect` to a bare createActor, or to see history nobody watched. */
  readonly observer: (event: InspectionEvent) => void;
  readonly collector: InspectionCollector;
  readonly options: ResolvedInspectorOptions;
  attach(mount: InspectorMount): InspectorRoutes;
  /** Sends pending changes to every viewer now (the clock does it every `flushMs`). */
  flush(): void;
  stats(): ReturnType<InspectionCollector['stats']> & ReturnType<InspectorHub['stats']>;
  /** Closes every viewer. */
  close(): void;
}

/** Builds the inspector. Throws `InspectorConfigError` for bad options. */
export function createInspector(options: InspectorOptions = {}): Inspector {
  const opts = resolveInspectorOptions(options);
  const collector = new InspectionCollector({
    clock: opts.clock,
    eventsPerActor: opts.eventsPerActor,
    timelineSize: opts.timelineSize,
    maxActors: opts.maxActors,
    keepDead: opts.keepDead,
  });
  // Records from an always-on observer are current: only the gate's go stale while closed.
  const gate: InspectionGate = new InspectionGate(collector.observer, {
    onOpen: () => {
      if (gate.inUse) collector.resync();
    },
  });
  let closeGate: (() => void) | null = null;
  const hub = new InspectorHub(collector, {
    clock: opts.clock,
    flushMs: opts.flushMs,
    treeIntervalMs: opts.treeIntervalMs,
    maxBufferedBytes: opts.maxBufferedBytes,
    maxSkips: opts.maxSkips,
    json: opts.json,
    logger: opts.logger,
    onWatching(watching) {
      closeGate?.();
      closeGate = watching ? gate.open() : null;
    },
  });
  // Build the page in the background so the first visit is fast; a failure
  // is reported when the page is asked for.
  inspectorScript().catch(() => {});
  inspectorElkScript().catch(() => {});

  const attach = (mount: InspectorMount): InspectorRoutes => {
    let closing = false;
    const jobs = mount.board ? new JobIndex(mount.board, () => hub.jobsChanged()) : null;
    if (jobs) hub.useJobs(jobs);
    const wss = new WebSocketServer({
      noServer: true,
      maxPayload: opts.maxPayload,
      clientTracking: false,
      // Never echo the bearer subprotocol: it holds the token.
      handleProtocols: (p) => (p.has(INSPECT_SUBPROTOCOL) ? INSPECT_SUBPROTOCOL : false),
    });
    return {
      handleHttp(req, res) {
        const path = requestPath(req);
        if (path === INSPECT_EXIT_PATH) {
          if (closing) {
            res.writeHead(503, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ error: { code: 'unavailable', message: 'server closing' } }));
          } else {
            handleExitRoute(req, res, {
              authenticate: mount.authenticate,
              collector,
              maxBody: opts.maxPayload,
              logger: opts.logger,
            });
          }
          return true;
        }
        if (path !== '/inspect' && path !== '/inspect.js' && path !== INSPECT_ELK_PATH)
          return false;
        // A HEAD is answered like the GET, as every board route is (node's
        // response sends no body for it).
        if (req.method !== 'GET' && req.method !== 'HEAD') {
          res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'application/json' });
          res.end(
            JSON.stringify({ error: { code: 'method_not_allowed', message: 'use GET, HEAD' } }),
          );
          return true;
        }
        if (path === '/inspect') {
          res.writeHead(200, {
            ...htmlHeaders(INSPECTOR_CSP),
            'cache-control': 'no-store',
          });
          res.end(INSPECTOR_HTML);
          return true;
        }
        (path === INSPECT_ELK_PATH ? inspectorElkScript() : inspectorScript()).then(
          (js) => {
            res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' });
            res.end(js);
          },
          (err: unknown) => {
            opts.logger.warn({ err }, 'inspector page bundle failed');
            res.writeHead(500, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ error: { code: 'internal', message: 'page bundle failed' } }));
          },
        );
        return true;
      },
      handleUpgrade(req, socket, head) {
        if (requestPath(req) !== INSPECT_WS_PATH) return false;
        socket.on('error', (err) => opts.logger.warn({ err }, 'inspector upgrade socket error'));
        const refuse = (status: number, code: string, message: string) => {
          mount.onRefusal?.(code);
          rejectUpgrade(socket, status, code, message);
        };
        if (req.headers.upgrade?.toLowerCase() !== 'websocket') {
          refuse(400, 'bad_request', 'only websocket upgrades');
          return true;
        }
        const token = tokenOf(req);
        const principal = token === null ? null : mount.authenticate(token);
        if (principal === null) {
          refuse(401, 'unauthorized', 'a valid bearer token is required');
        } else if (principal.kind !== 'admin') {
          refuse(403, 'forbidden', 'the inspector needs the admin token');
        } else if (closing) {
          refuse(503, 'unavailable', 'server closing');
        } else if (hub.viewerCount >= opts.maxViewers) {
          refuse(503, 'unavailable', 'too many inspector viewers');
        } else {
          wss.handleUpgrade(req, socket, head, (ws) => hub.attach(ws));
        }
        return true;
      },
      close() {
        if (closing) return;
        closing = true;
        jobs?.close();
        hub.close();
        wss.close();
      },
      terminate: () => hub.terminate(),
    };
  };

  return {
    gate,
    observer: collector.observer,
    collector,
    options: opts,
    attach,
    flush: () => hub.flush(),
    stats: () => ({ ...collector.stats(), ...hub.stats() }),
    close: () => hub.close(),
  };
}
