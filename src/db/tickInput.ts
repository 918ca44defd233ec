/**
 * The tick's boundary: every op is validated (validateTickOp.ts) before any
 * SQL runs, and turned into the JSON `rt_tick` reads, grouped by kind in
 * the contract's order. Everything the database would reject with an error (and so roll
 * the whole batch back) is caught here instead: lengths, slugs, output
 * size (fitted, as finishRun does), duplicate refs and ids.
 */
import { z } from 'zod';
import { ValidationError } from './errors.js';
import * as f from './inputs.js';
import { parseOrThrow } from './parseOrThrow.js';
import { fitOutput, writtenBytes } from './sessionOutputs.js';
import { fastCheckedHead } from './tickFastCheck.js';
import type { TickInput } from './tickTypes.js';
import { MAX_TICK_OPS, validateTickOp } from './validateTickOp.js';

/** The head's schema (exported for the hand check's test, src/db/tickFastCheck.ts). */
export const tickHeadSchema = z.strictObject({
  owner: f.name,
  now: f.now,
  globalCap: f.maxRunning,
  defaultUserCap: f.maxRunning,
  want: f.maxRunning,
  ops: z.array(z.unknown()).max(MAX_TICK_OPS),
  resync: z.boolean().optional(),
  since: f.tickNumber.optional(),
  tailChars: f.tailChars.optional(),
  changesMax: f.changesMax.optional(),
});

/** The JSON `rt_tick` takes. Keys are the recordset columns of src/db/sql/rtTick.ts. */
export interface TickPayload {
  owner: string;
  now: string;
  global_cap: number;
  default_user_cap: number;
  want: number;
  resync: boolean;
  /** The reply's rows as arrays of src/db/sql/rowJson.ts's columns (absent: as objects). */
  rows: 'array';
  /**
   * A finish that applied with no requeue is answered as its phase ends, in
   * the reply's `finished` (absent: among the outcomes, as an older node expects).
   */
  finished: true;
  /**
   * The reply's `changes` carry their tasks without `run_spec` (null): the
   * node never runs a changed row (absent: with it, as an older node expects).
   */
  changes_without_spec: true;
  /** Absent: the reply carries no `changes`. */
  since?: number;
  tail_chars?: number;
  /** With `since`: more changed sessions than this are flagged, not sent (absent: all are sent). */
  changes_max?: number;
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
 * both from one write of its row: the finish carries the handle (`h_*`)
 * and the handle op leaves the tick's handles. Its outcome comes with its
 * finish's: the function checks the handle's compare-and-set on the row the
 * finish left and, when the finish applied and the handle holds, names the
 * handle's ref on the finish's outcome (`tick.ts` answers it with the same
 * session), else answers it as an outcome of its own. That saves a row
 * version of `sessions` per such job and the handle's outcome row (a
 * lookup and a session rendered in the reply: ~20% of a steady tick of 20
 * jobs). Only a lone handle op of the finish's epoch folds; the fencing is
 * the same (running at that epoch), so the outcome of each op is the same
 * as unfolded. Returns the handles left to write.
 *
 * @example
 * ```ts
 * const h = { ord: 0, ref: 'h', session_id: 's', epoch: 1, backend: 'simulated', handle: 'x', started_at: null };
 * const f = { ord: 1, ref: 'f', session_id: 's', epoch: 1 };
 * foldHandles([h], [f]) // => []
 * f.h_handle // => 'x'
 * f.h_ref // => 'h'
 * ```
 */
export function foldHandles(handles: HandleRow[], finishes: FinishRow[]): HandleRow[] {
  if (handles.length === 0 || finishes.length === 0) return handles;
  const lone = new Map<string, HandleRow | null>();
  for (const h of handles) lone.set(h.session_id, lone.has(h.session_id) ? null : h);
  const folded = new Set<HandleRow>();
  for (const f of finishes) {
    const h = lone.get(f.session_id);
    if (h === undefined || h === null || h.epoch !== f.epoch) continue;
    folded.add(h);
    f.h_backend = h.backend;
    f.h_handle = h.handle;
    f.h_started_at = h.started_at;
    f.h_ord = h.ord;
    f.h_ref = h.ref;
  }
  return folded.size === 0 ? handles : handles.filter((h) => !folded.has(h));
}

/** Validates a whole tick (throws `ValidationError` before any SQL) and builds its payload. */
export function tickPayload(input: TickInput): TickPayload {
  const head = fastCheckedHead(input, MAX_TICK_OPS) ?? parseOrThrow(tickHeadSchema, input, '');
  const p: TickPayload = {
    owner: head.owner,
    now: head.now.toISOString(),
    global_cap: head.globalCap,
    default_user_cap: head.defaultUserCap,
    want: head.want,
    resync: head.resync ?? false,
    rows: 'array',
    finished: true,
    changes_without_spec: true,
    ...(head.since === undefined ? {} : { since: head.since }),
    ...(head.tailChars === undefined ? {} : { tail_chars: head.tailChars }),
    ...(head.changesMax === undefined ? {} : { changes_max: head.changesMax }),
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
          out_total: out === null ? null : writtenBytes(out),
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
          // Absent (null to the function) unless the caller gave one: the bytes of the common case stay as they were.
          ...(o.key === undefined ? {} : { key: o.key }),
          ...(o.timeLimitMs === undefined ? {} : { limit_ms: o.timeLimitMs }),
        });
        break;
    }
  });
  p.handles = foldHandles(p.handles, p.finishes);
  return p;
}
