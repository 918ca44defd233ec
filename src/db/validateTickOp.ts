/**
 * One op of the tick, checked with zod (the same field rules as every
 * other repository, src/db/inputs.ts) before any SQL runs, plus the rules
 * zod cannot say (a failed finish has a reason, a succeeded one an exit
 * code, only a failed run is re-queued). A node checks each caller's op
 * when it is submitted, so one bad op never fails the batch it would ride.
 */
import { z } from 'zod';
import { ValidationError } from './errors.js';
import * as f from './inputs.js';
import { parseOrThrow } from './parseOrThrow.js';
import { fastCheckedOp } from './tickFastCheck.js';
import type { TickOp } from './tickTypes.js';

/** Most ops one tick carries (one statement's JSON stays a few MB, outputs aside). */
export const MAX_TICK_OPS = 10_000;

const ref = z.string().min(1).max(128);
const column = f.column.optional();

/** The schema every op is held to (exported for the hand check's test). */
export const tickOpSchema = z.discriminatedUnion('op', [
  z.strictObject({
    op: z.literal('enqueue'),
    ref,
    taskId: f.taskId,
    sessionId: f.sessionId,
    userId: f.name,
    title: f.title,
    spec: f.spec,
    column,
    key: f.submitKey.optional(),
    timeLimitMs: f.timeLimitMs.optional(),
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
  // The runners' two ops per job are checked by hand first (same rules);
  // anything that check cannot vouch for goes to the schema, which names the field.
  const o = fastCheckedOp(op) ?? parseOrThrow(tickOpSchema, op, `ops.${index}`);
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
