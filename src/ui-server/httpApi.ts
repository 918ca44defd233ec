/**
 * The HTTP API: tasks, caps, pool, health, metrics and the page. Bodies are
 * validated with zod; every failure is `{ error: { code, message } }` with a
 * status that matches the code. The route table is httpRoutes.ts (its
 * isBoardPath re-exported from here as before), JSON in and out httpJson.ts.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import {
  BOARD_COMMAND_STATUS,
  type BoardCommands,
  BoardStoppedError,
  isBoardCommandError,
} from '../board/boardPort.js';
import { submissionSchema, taskTitle } from '../board/submission.js';
import { submitKey } from '../board/submitKey.js';
import { parseActivityQuery } from './activityRoute.js';
import { type Principal, tokenOf, viewerOf } from './authenticate.js';
import type { BoardMetrics } from './boardMetrics.js';
import type { BoardStats } from './boardStats.js';
import { htmlHeaders } from './htmlHeaders.js';
import { readJson, send } from './httpJson.js';
import { matchRoute } from './httpRoutes.js';
import {
  jobReads,
  parsePageQuery,
  type RouteRefusal,
  readPage,
  type StallClock,
  sendDownload,
} from './jobRoutes.js';
import { requestUrl, UiRequestError } from './listenerGuard.js';
import { healthFlags } from './nodeHealth.js';
import { type OutputReadGate, OutputReadLimitError } from './outputReadGate.js';
import { chartEngineScript, PAGE_CSP, PAGE_HTML, pageScript } from './pageBundle.js';
import type { UiServerLogger } from './uiServerOptions.js';

export { isBoardPath } from './httpRoutes.js';

// The runtime's rules for a submission (its key comes as a header), so a bad
// spec is a 400 naming the field here rather than a refusal from the tick.
const createTaskBody = submissionSchema
  .omit({ key: true })
  .extend({ title: z.string().trim().pipe(taskTitle) });

/**
 * The `Idempotency-Key` header of a submission, or undefined when absent;
 * a malformed one is refused (400) before the body is read.
 */
function idempotencyKey(req: IncomingMessage): string | undefined {
  const raw = req.headers['idempotency-key'];
  if (raw === undefined) return undefined;
  const parsed = submitKey.safeParse(raw);
  if (!parsed.success) {
    throw new UiRequestError(
      400,
      'bad_request',
      'Idempotency-Key must be one header of 1-255 visible ASCII characters (no spaces)',
    );
  }
  return parsed.data;
}

const setCapBody = z.strictObject({
  maxRunning: z.number().int().min(0).max(10_000).nullable(),
});

/** How many of the line GET /api/admin/status lists (what `roundtable status` shows). */
const STATUS_HEAD_SIZE = 5;

/** What the handler needs from the server. */
export interface HttpApiContext {
  commands: BoardCommands;
  metrics: BoardMetrics;
  stats: BoardStats;
  authenticate(token: string): Principal | null;
  maxHttpBody: number;
  /** Output reads in flight per user (`maxOutputReadsPerUser`). */
  outputReads: OutputReadGate;
  /** The server's clock: a download's stall deadline runs on it. */
  clock: StallClock;
  connections(): number;
  logger: UiServerLogger;
}

function principalOf(req: IncomingMessage, ctx: HttpApiContext): Principal {
  const token = tokenOf(req);
  const principal = token === null ? null : ctx.authenticate(token);
  if (principal === null) {
    throw new UiRequestError(401, 'unauthorized', 'a valid bearer token is required', {
      headers: { 'www-authenticate': 'Bearer' },
    });
  }
  return principal;
}

/** A place among the principal's output reads in flight, or 429. */
function enterOutputRead(gate: OutputReadGate, principal: Principal): () => void {
  try {
    return gate.enter(principal.kind === 'admin' ? '' : `user:${principal.userId}`);
  } catch (err) {
    if (!(err instanceof OutputReadLimitError)) throw err;
    throw new UiRequestError(429, err.code, err.message, {
      cause: err,
      headers: { 'retry-after': '1' },
    });
  }
}

/** Seconds a 503 `unavailable` (the store did not answer) asks a client to wait. */
const RETRY_AFTER_UNAVAILABLE_S = 2;

function requireAdmin(principal: Principal): void {
  if (principal.kind !== 'admin')
    throw new UiRequestError(403, 'forbidden', 'admin token required');
}

async function route(req: IncomingMessage, res: ServerResponse, ctx: HttpApiContext) {
  const url = requestUrl(req);
  const r = matchRoute(req.method, url.pathname);
  const { param, second } = r;
  const refuse = (e: RouteRefusal): never => {
    throw new UiRequestError(e.status, e.code, e.message);
  };
  const notFound = () => refuse({ status: 404, code: 'not_found', message: `no task ${param}` });
  switch (r.name) {
    case 'page':
      res.writeHead(200, htmlHeaders(PAGE_CSP));
      return res.end(PAGE_HTML);
    case 'script':
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' });
      return res.end(await pageScript());
    case 'chartEngine':
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' });
      return res.end(await chartEngineScript());
    case 'health': {
      const health = ctx.commands.health?.();
      return send(res, 200, {
        ok: true,
        connections: ctx.connections(),
        ...(health ? { engine: health.engine } : {}),
        ...(health?.backend ? { backend: health.backend } : {}),
        // A boot that lost its lock takes no grants: it cannot prove it is alive.
        ...(health?.lock
          ? { lock: health.lock, takingGrants: healthFlags(health).takingGrants }
          : {}),
        ...(health?.reconciler ? { reconciler: health.reconciler } : {}),
        ...(health?.notifications ? { notifications: health.notifications } : {}),
      });
    }
    case 'ready': {
      const readiness = (await ctx.commands.readiness?.()) ?? { ready: true, reasons: [] };
      return send(
        res,
        readiness.ready ? 200 : 503,
        readiness.ready
          ? readiness
          : {
              ...readiness,
              error: { code: 'not_ready', message: `not ready: ${readiness.reasons.join(', ')}` },
            },
      );
    }
    case 'nodes': {
      requireAdmin(principalOf(req, ctx));
      if (ctx.commands.clusterNodes === undefined)
        throw new UiRequestError(404, 'not_found', 'this node has no cluster view');
      return send(res, 200, { nodes: await ctx.commands.clusterNodes() });
    }
    case 'status': {
      requireAdmin(principalOf(req, ctx));
      if (ctx.commands.lineStatus === undefined)
        throw new UiRequestError(404, 'not_found', 'this node has no rows to count');
      return send(res, 200, await ctx.commands.lineStatus(STATUS_HEAD_SIZE));
    }
    case 'activity': {
      requireAdmin(principalOf(req, ctx));
      if (ctx.commands.activity === undefined)
        throw new UiRequestError(404, 'not_found', 'this node has no rows to chart');
      const query = parseActivityQuery(url.searchParams);
      if ('status' in query) return refuse(query);
      return send(res, 200, await ctx.commands.activity(query));
    }
    case 'metrics': {
      requireAdmin(principalOf(req, ctx));
      const text = await ctx.metrics.render();
      res.writeHead(200, { 'content-type': ctx.metrics.contentType });
      return res.end(text);
    }
    case 'pool': {
      const viewer = viewerOf(principalOf(req, ctx));
      const pool = ctx.commands.poolSnapshot();
      const users = viewer === null ? pool.users : pool.users.filter((u) => u.userId === viewer);
      return send(res, 200, { ...pool, users });
    }
    case 'stats':
      return send(res, 200, ctx.stats.snapshot(viewerOf(principalOf(req, ctx))));
    case 'task': {
      const reads = jobReads(ctx.commands);
      if ('status' in reads) return refuse(reads);
      const detail = await reads.taskDetail(viewerOf(principalOf(req, ctx)), param);
      return detail === null ? notFound() : send(res, 200, detail);
    }
    case 'output':
    case 'download': {
      const reads = jobReads(ctx.commands);
      if ('status' in reads) return refuse(reads);
      const principal = principalOf(req, ctx);
      const query = parsePageQuery(url.searchParams);
      if ('status' in query) return refuse(query);
      const target = { viewer: viewerOf(principal), taskId: param, sessionId: second };
      const release = enterOutputRead(ctx.outputReads, principal);
      try {
        const page =
          r.name === 'download'
            ? await sendDownload(res, ctx.commands, target, ctx.clock)
            : await readPage(ctx.commands, target, query);
        if (page === false || page === null) {
          return refuse({
            status: 404,
            code: 'not_found',
            message: `no stored output for ${second}`,
          });
        }
        return page === true ? undefined : send(res, 200, page);
      } finally {
        release();
      }
    }
    case 'create': {
      const principal = principalOf(req, ctx);
      if (principal.kind !== 'user') {
        throw new UiRequestError(403, 'forbidden', 'tasks belong to users: use a user token');
      }
      const key = idempotencyKey(req);
      const body = await readJson(req, ctx.maxHttpBody, createTaskBody);
      const created = await ctx.commands.createTask(
        principal.userId,
        key === undefined ? body : { ...body, key },
      );
      // 201 for a new task; 200 when the key named one submitted before.
      return send(res, created.replayed === true ? 200 : 201, {
        ...created,
        replayed: created.replayed === true,
      });
    }
    case 'cancel':
      await ctx.commands.cancel(viewerOf(principalOf(req, ctx)), param);
      return send(res, 204, undefined);
    case 'retry':
      return send(res, 202, await ctx.commands.retry(viewerOf(principalOf(req, ctx)), param));
    case 'cap': {
      requireAdmin(principalOf(req, ctx));
      const body = await readJson(req, ctx.maxHttpBody, setCapBody);
      await ctx.commands.setUserCap(param, body.maxRunning);
      return send(res, 204, undefined);
    }
  }
}

/** Handles one request; never throws. */
export async function handleHttp(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: HttpApiContext,
): Promise<void> {
  try {
    await route(req, res, ctx);
  } catch (err) {
    if (res.headersSent) {
      ctx.logger.error({ err }, 'http: failed after headers were sent');
      ctx.metrics.refused('internal');
      res.destroy();
      return;
    }
    if (err instanceof UiRequestError) {
      ctx.metrics.refused(err.code);
      if (err.status === 413) res.setHeader('connection', 'close');
      return send(
        res,
        err.status,
        { error: { code: err.code, message: err.message } },
        err.headers,
      );
    }
    if (isBoardCommandError(err)) {
      const status = BOARD_COMMAND_STATUS[err.code];
      ctx.metrics.refused(err.code);
      // The store is down: a client (or its HTTP library) backs off before it tries again.
      const headers =
        status === 503 ? { 'retry-after': String(RETRY_AFTER_UNAVAILABLE_S) } : undefined;
      return send(res, status, { error: { code: err.code, message: err.message } }, headers);
    }
    if (err instanceof BoardStoppedError) {
      // The node is stopping (a deploy): another node, or this one started again, takes it.
      ctx.metrics.refused('unavailable');
      return send(
        res,
        BOARD_COMMAND_STATUS.unavailable,
        { error: { code: 'unavailable', message: err.message } },
        { 'retry-after': String(RETRY_AFTER_UNAVAILABLE_S) },
      );
    }
    ctx.logger.error({ err, url: req.url }, 'http: internal error');
    ctx.metrics.refused('internal');
    send(res, 500, { error: { code: 'internal', message: 'internal error' } });
  }
}
