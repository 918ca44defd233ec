/**
 * The tick's boundary: every op is validated with zod (the same field rules
 * as every other repository, src/db/inputs.ts) before any SQL runs, and
 * turned into the JSON `rt_tick` reads, grouped by kind in the contract's
 * order. Everything the database would reject with an error (and so roll
 * the whole batch back) is caught here instead: lengths, slugs, output
 * size (fitted, as finishRun does), duplicate refs and ids.
 */
import { z } from 'zod';
import { ValidationError } from './errors.js';
import * as f from './inputs.js';
import { parseOrThrow } from './parseOrThrow.js';
import { fitOutput } from './sessionOutputs.js';
import type { TickInput, TickOp } from './tickTypes.js';

/** Most ops one tick carries (one statement's JSON stays a few MB, outputs aside). */
export const MAX_TICK_OPS = 10_000;

const ref = z.string().min(1).max(128);
const column = f.column.optional();

const opSchema = z.discriminatedUnion('op', [
  z.strictObject({
    op: z.literal('enqueue'),
    ref,
    taskId: f.taskId,
    sessionId: f.sessionId,
    userId: f.name,
    title: f.title,
    spec: f.spec,
    column,
  }),
  z.strictObject({
    op: z.literal('retry'),
    ref,
    taskId: f.taskId,
    actor: f.name.nullable(),
    sessionId: f.sessionId,
    expected: z.strictObject({
      sessionId: f.sessionId,
      status: z.enum(['failed', 'cancelled']),
      epoch: f.epoch,
    }),
    column,
  }),
  z.strictObject({
    op: z.literal('handle'),
    ref,
    sessionId: f.sessionId,
    epoch: f.epoch,
    backend: f.backend,
    handle: f.handle,
    startedAt: f.now.nullable(),
  }),
  z.strictObject({
    op: z.literal('finish'),
    ref,
    sessionId: f.sessionId,
    epoch: f.epoch,
    status: z.enum(['succeeded', 'failed']),
    exitCode: f.exitCode.nullable(),
    reason: f.reason.nullable(),
    userRecoverable: z.boolean(),
    output: z
      .strictObject({
        text: z.string(),
        totalBytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
        truncated: z.boolean(),
      })
      .nullable(),
    column: f.column,
    requeue: z.strictObject({ sessionId: f.sessionId }).nullable(),
  }),
  z.strictObject({
    op: z.literal('cancel'),
    ref,
    sessionId: f.sessionId,
    expected: z.strictObject({ status: z.enum(['queued', 'running']), epoch: f.epoch }),
    reason: f.reason,
    column: f.column,
  }),
  z.strictObject({
    op: z.literal('cap'),
    ref,
    userId: f.name,
    maxRunning: f.maxRunning.nullable(),
  }),
]);

const headSchema = z.strictObject({
  owner: f.name,
  now: f.now,
  globalCap: f.maxRunning,
  defaultUserCap: f.maxRunning,
  want: f.maxRunning,
  ops: z.array(z.unknown()).max(MAX_TICK_OPS),
  resync: z.boolean().optional(),
});

/**
 * Ops already checked, with the check's output. A command's op is checked
 * when it is submitted (so a bad one is its caller's error at once) and
 * again by its tick: the second check of the same object is this lookup, not
 * a second zod pass per enqueue.
 */
const checked = new WeakMap<object, TickOp>();

/**
 * Validates one op as the tick would (`ops.<index>.<field>` in the error):
 * for a node that checks each caller's op when it is submitted, so one bad
 * op never fails the batch it would have ridden.
 */
export function validateTickOp(op: unknown, index = 0): TickOp {
  const known = typeof op === 'object' && op !== null ? checked.get(op) : undefined;
  if (known !== undefined) return known;
  const o = parseOrThrow(opSchema, op, `ops.${index}`);
  if (o.op === 'finish') {
    if (o.status === 'failed' && o.reason === null) {
      throw new ValidationError(`ops.${index}.reason`, 'required when failed');
    }
    if (o.status === 'succeeded' && o.exitCode === null) {
      throw new ValidationError(`ops.${index}.exitCode`, 'required when succeeded');
    }
    if (o.requeue !== null && o.status !== 'failed') {
      throw new ValidationError(`ops.${index}.requeue`, 'only a failed run is requeued');
    }
  }
  // zod's output is a copy (objects and arrays): what the tick sends is the op
  // as it was checked, whatever its caller does with the object afterwards.
  if (typeof op === 'object' && op !== null) checked.set(op, o as TickOp);
  return o as TickOp;
}

/** The JSON `rt_tick` takes. Keys are the recordset columns of src/db/sql/rtTick.ts. */
export interface TickPayload {
  owner: string;
  now: string;
  global_cap: number;
  default_user_cap: number;
  want: number;
  resync: boolean;
  caps: object[];
  handles: HandleRow[];
  finishes: FinishRow[];
  cancels: object[];
  retries: object[];
  enqueues: object[];
}

interface HandleRow {
  ord: number;
  ref: string;
  session_id: string;
  epoch: number;
  backend: string;
  handle: string;
  started_at: string | null;
  /** Written by the finish of the same run in this tick (foldHandles). */
  folded?: boolean;
}

interface FinishRow {
  ord: number;
  ref: string;
  session_id: string;
  epoch: number;
  [column: string]: unknown;
}

/**
 * A run that ends in the tick that records its handle (a short job) gets
 * both from one write of its row: the finish carries the handle and the
 * handle op only answers (`folded`), which saves a row version of
 * `sessions` and its index entries per such job. Only a lone handle op of
 * the finish's epoch folds; the fencing is the same (running at that
 * epoch), so the outcome of each op is the same as unfolded.
 *
 * @example
 * ```ts
 * const h = { ord: 0, ref: 'h', session_id: 's', epoch: 1, backend: 'simulated', handle: 'x', started_at: null };
 * const f = { ord: 1, ref: 'f', session_id: 's', epoch: 1 };
 * foldHandles([h], [f]);
 * h.folded // => true
 * f.h_handle // => 'x'
 * ```
 */
export function foldHandles(handles: HandleRow[], finishes: FinishRow[]): void {
  if (handles.length === 0 || finishes.length === 0) return;
  const lone = new Map<string, HandleRow | null>();
  for (const h of handles) lone.set(h.session_id, lone.has(h.session_id) ? null : h);
  for (const f of finishes) {
    const h = lone.get(f.session_id);
    if (h === undefined || h === null || h.epoch !== f.epoch) continue;
    h.folded = true;
    f.h_backend = h.backend;
    f.h_handle = h.handle;
    f.h_started_at = h.started_at;
  }
}

/** Validates a whole tick (throws `ValidationError` before any SQL) and builds its payload. */
export function tickPayload(input: TickInput): TickPayload {
  const head = parseOrThrow(headSchema, input, '');
  const p: TickPayload = {
    owner: head.owner,
    now: head.now.toISOString(),
    global_cap: head.globalCap,
    default_user_cap: head.defaultUserCap,
    want: head.want,
    resync: head.resync ?? false,
    caps: [],
    handles: [],
    finishes: [],
    cancels: [],
    retries: [],
    enqueues: [],
  };
  const refs = new Set<string>();
  // Ids the tick creates: each must be new, and not an id another op names.
  const fresh = new Map<string, number>();
  const named = new Map<string, number>();
  const claim = (map: Map<string, number>, id: string, ord: number, field: string) => {
    if (map === fresh && (fresh.has(id) || named.has(id))) {
      throw new ValidationError(`ops.${ord}.${field}`, `id ${id} is used twice in this tick`);
    }
    if (map === named && fresh.has(id)) {
      throw new ValidationError(`ops.${ord}.${field}`, `id ${id} is created in this tick`);
    }
    map.set(id, ord);
  };
  head.ops.forEach((raw, ord) => {
    const o = validateTickOp(raw, ord);
    if (refs.has(o.ref)) throw new ValidationError(`ops.${ord}.ref`, `duplicate ref ${o.ref}`);
    refs.add(o.ref);
    switch (o.op) {
      case 'cap':
        p.caps.push({ ord, ref: o.ref, user_id: o.userId, max_running: o.maxRunning });
        break;
      case 'handle':
        claim(named, o.sessionId, ord, 'sessionId');
        p.handles.push({
          ord,
          ref: o.ref,
          session_id: o.sessionId,
          epoch: o.epoch,
          backend: o.backend,
          handle: o.handle,
          started_at: o.startedAt === null ? null : o.startedAt.toISOString(),
        });
        break;
      case 'finish': {
        claim(named, o.sessionId, ord, 'sessionId');
        if (o.requeue !== null) claim(fresh, o.requeue.sessionId, ord, 'requeue.sessionId');
        const out = o.output;
        const fitted = out === null ? null : fitOutput(out);
        p.finishes.push({
          ord,
          ref: o.ref,
          session_id: o.sessionId,
          epoch: o.epoch,
          status: o.status,
          exit_code: o.exitCode,
          reason: o.reason,
          user_recoverable: o.userRecoverable,
          has_output: out !== null,
          out_text: fitted?.text ?? null,
          out_total: out === null ? null : Math.max(out.totalBytes, Buffer.byteLength(out.text)),
          out_truncated: fitted?.truncated ?? null,
          col: o.column,
          requeue_id: o.requeue?.sessionId ?? null,
        });
        break;
      }
      case 'cancel':
        claim(named, o.sessionId, ord, 'sessionId');
        p.cancels.push({
          ord,
          ref: o.ref,
          session_id: o.sessionId,
          exp_status: o.expected.status,
          exp_epoch: o.expected.epoch,
          reason: o.reason,
          col: o.column,
        });
        break;
      case 'retry':
        claim(named, o.expected.sessionId, ord, 'expected.sessionId');
        claim(fresh, o.sessionId, ord, 'sessionId');
        p.retries.push({
          ord,
          ref: o.ref,
          task_id: o.taskId,
          actor: o.actor,
          session_id: o.sessionId,
          exp_session_id: o.expected.sessionId,
          exp_status: o.expected.status,
          exp_epoch: o.expected.epoch,
          col: o.column ?? 'queued',
        });
        break;
      case 'enqueue':
        claim(fresh, o.sessionId, ord, 'sessionId');
        claim(fresh, o.taskId, ord, 'taskId');
        p.enqueues.push({
          ord,
          ref: o.ref,
          task_id: o.taskId,
          session_id: o.sessionId,
          user_id: o.userId,
          title: o.title,
          spec: o.spec,
          col: o.column ?? 'queued',
        });
        break;
    }
  });
  foldHandles(p.handles, p.finishes);
  return p;
}
