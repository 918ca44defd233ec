/**
 * `POST /inspect/api/exit`: OTP's `exit(Pid, Reason)` for an operator, on a
 * supervised child picked on the inspector page. Admin only. The child is
 * found in the inspector's tree (by its sessionId, or by
 * `supervisor/child`), its supervisor through the supervisor's inspection
 * shell, and `Supervisor.exitChild` applies the restart policy. A flat
 * ladder of guards, each rejection a typed `{ error: { code, message } }`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { firstIssue } from '../../common/firstIssue.js';
import { NoProcError, NotFoundError } from '../../supervisor/errors.js';
import { type ExitSignal, supervisorOfShell } from '../../supervisor/exitChild.js';
import { describeExitReason } from '../../supervisor/exitReason.js';
import { type Principal, tokenOf } from '../authenticate.js';
import { UiRequestError } from '../listenerGuard.js';
import type { InspectionCollector } from './InspectionCollector.js';
import type { InspectApiErrorCode } from './inspectorProtocol.js';
import type { InspectorTree } from './inspectorTree.js';

/** A rejected exit request; `status` is the HTTP status it is answered with. */
export class InspectorApiError extends UiRequestError<InspectApiErrorCode> {
  override readonly name = 'InspectorApiError';
}

/** The exit reason an operator chose with `{ error: message }`. */
export class OperatorExitError extends Error {
  override readonly name = 'OperatorExitError';
  readonly code = 'OPERATOR_EXIT';
}

const reason = z
  .union([
    z.enum(['kill', 'normal', 'shutdown']),
    z.strictObject({ shutdown: z.string().max(200) }),
    z.strictObject({ error: z.string().max(200) }),
  ])
  .default('kill');

export const exitRequestSchema = z
  .strictObject({
    sessionId: z.string().min(1).max(200).optional(),
    /** `supervisor/child`: the supervisor's id or sessionId, then the child's id. */
    path: z.string().min(3).max(400).optional(),
    reason,
  })
  .refine((r) => (r.sessionId === undefined) !== (r.path === undefined), {
    message: 'give exactly one of sessionId and path',
  });

export type ExitRequest = z.infer<typeof exitRequestSchema>;

/**
 * Which supervisor (its sessionId) and child a request names.
 *
 * @example
 * ```ts
 * const child = { id: 'runnerPool', sessionId: 'x:2', status: 'running', restartCount: 0, exits: [], restartDelayMs: null }
 * const tree = { supervisors: { 'x:1': { id: 'root', sessionId: 'x:1', status: 'running', reason: null, intensityReachedAt: null, children: [child] } }, monitors: {} }
 * resolveExitTarget(tree, { sessionId: 'x:2', reason: 'kill' }) // => { supervisorSessionId: 'x:1', childId: 'runnerPool' }
 * resolveExitTarget(tree, { path: 'root/runnerPool', reason: 'kill' }) // => { supervisorSessionId: 'x:1', childId: 'runnerPool' }
 * resolveExitTarget(tree, { sessionId: 'x:9', reason: 'kill' }) // throws InspectorApiError
 * ```
 */
export function resolveExitTarget(
  tree: InspectorTree,
  req: ExitRequest,
): { supervisorSessionId: string; childId: string } {
  const live = Object.values(tree.supervisors).filter((s) => s.status === 'running');
  if (req.sessionId !== undefined) {
    for (const s of live) {
      const c = s.children.find((ch) => ch.sessionId === req.sessionId && ch.status === 'running');
      if (c) return { supervisorSessionId: s.sessionId, childId: c.id };
    }
    throw new InspectorApiError(
      404,
      'not_found',
      `no running supervised child with sessionId ${req.sessionId}`,
    );
  }
  // The schema takes exactly one of sessionId and path, and sessionId was handled.
  const path = req.path ?? '';
  const cut = path.indexOf('/');
  const sup = cut > 0 ? path.slice(0, cut) : '';
  const childId = cut > 0 ? path.slice(cut + 1) : '';
  if (sup === '' || childId === '')
    throw new InspectorApiError(400, 'bad_request', 'path: expected supervisor/child');
  const matches = live.filter((s) => s.sessionId === sup || s.id === sup);
  const s = matches[0];
  if (s === undefined)
    throw new InspectorApiError(404, 'not_found', `no running supervisor ${sup}`);
  if (matches.length > 1)
    throw new InspectorApiError(
      409,
      'ambiguous',
      `${sup} names ${matches.length} supervisors: use its sessionId`,
    );
  if (!s.children.some((c) => c.id === childId))
    throw new InspectorApiError(404, 'not_found', `${s.id} has no child ${childId}`);
  return { supervisorSessionId: s.sessionId, childId };
}

function toSignal(r: ExitRequest['reason']): ExitSignal {
  if (typeof r === 'string') return r;
  if ('error' in r) return { error: new OperatorExitError(r.error) };
  return r;
}

async function readJson(req: IncomingMessage, limit: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit)
      throw new InspectorApiError(413, 'payload_too_large', `body over ${limit} bytes`);
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (err) {
    throw new InspectorApiError(400, 'bad_json', (err as Error).message, { cause: err });
  }
}

export interface ExitApiContext {
  authenticate(token: string): Principal | null;
  collector: InspectionCollector;
  maxBody: number;
}

/** Runs the exit; resolves with the response body. Throws `InspectorApiError`. */
export async function exitThroughApi(
  req: IncomingMessage,
  ctx: ExitApiContext,
): Promise<{ ok: true; supervisor: string; childId: string; reason: string }> {
  if (req.method !== 'POST') throw new InspectorApiError(405, 'method_not_allowed', 'use POST');
  const token = tokenOf(req);
  const principal = token === null ? null : ctx.authenticate(token);
  if (principal === null)
    throw new InspectorApiError(401, 'unauthorized', 'a valid bearer token is required');
  if (principal.kind !== 'admin')
    throw new InspectorApiError(403, 'forbidden', 'exiting actors needs the admin token');
  const parsed = exitRequestSchema.safeParse(await readJson(req, ctx.maxBody));
  if (!parsed.success) {
    const { field, message } = firstIssue(parsed.error, 'body');
    throw new InspectorApiError(400, 'bad_request', `${field}: ${message}`);
  }
  const target = resolveExitTarget(ctx.collector.tree, parsed.data);
  const shell = ctx.collector.shells.get(target.supervisorSessionId);
  const sup = shell === undefined ? undefined : supervisorOfShell(shell);
  if (sup === undefined)
    throw new InspectorApiError(404, 'not_found', 'that supervisor cannot be reached from here');
  const signal = toSignal(parsed.data.reason);
  try {
    await sup.exitChild(target.childId, signal);
  } catch (err) {
    if (err instanceof NoProcError)
      throw new InspectorApiError(409, 'not_running', err.message, { cause: err });
    if (err instanceof NotFoundError)
      throw new InspectorApiError(404, 'not_found', err.message, { cause: err });
    throw err;
  }
  const why = signal === 'kill' ? 'killed' : signal;
  return { ok: true, supervisor: sup.id, childId: target.childId, reason: describeExitReason(why) };
}

/** The route: answers every outcome, a typed error included. */
export function handleExitRoute(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: ExitApiContext & { logger: { warn(obj: object, msg: string): void } },
): void {
  const answer = (status: number, body: unknown) => {
    if (res.headersSent) return;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (status === 405) headers.allow = 'POST';
    if (status === 413) headers.connection = 'close';
    res.writeHead(status, headers);
    res.end(JSON.stringify(body));
  };
  exitThroughApi(req, ctx).then(
    (body) => answer(200, body),
    (err: unknown) => {
      if (err instanceof InspectorApiError) {
        answer(err.status, { error: { code: err.code, message: err.message } });
        return;
      }
      ctx.logger.warn({ err }, 'inspector exit failed');
      answer(500, { error: { code: 'internal', message: 'the exit failed' } });
    },
  );
}
