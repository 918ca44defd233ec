/**
 * The tick's input checked by hand with the same rules as its zod schemas
 * (the head in tickInput.ts, the ops in validateTickOp.ts), which cost a
 * zod pass and its copies per op on the hot path: three ops per job (the
 * enqueue, the runner's handle and finish) and the head per tick. The
 * checks only ever accept: an input they cannot vouch for (a rule broken,
 * an unknown or missing key, a class instance) gets `undefined`, and the
 * zod schema then decides and names the field, so what passes and every
 * error are exactly the schema's. What they return is a copy shaped as
 * zod's output is (test/db/tickFastCheck.test.ts holds the two to the same
 * answers).
 */
import { CONTROL_CHARACTER } from '../board/submission.js';
import { isWellFormed } from '../common/wellFormed.js';
import { isId } from './ids.js';
import { TEXT_LIMITS } from './inputs.js';
import { RUN_SPEC_LIMITS as L } from './runSpec.js';
import type { TickEnqueue, TickFinish, TickHandle, TickInput } from './tickTypes.js';

type Row = Record<string, unknown>;

const BACKENDS = new Set(['swarm', 'docker', 'local', 'simulated']);
const HANDLE = /^[A-Za-z0-9][A-Za-z0-9_.:@-]*$/;
const COLUMN = /^[a-z][a-z0-9_-]{0,39}$/;
const INT32_MAX = 2_147_483_647;
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}$/;
const IMAGE = /^[A-Za-z0-9][A-Za-z0-9._/:@-]*$/;
const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
const MAX_RUNNING = 100_000;

/** A plain object with exactly `n` own keys (a key the schema does not know makes it more). */
function plain(v: unknown, n: number): v is Row {
  if (typeof v !== 'object' || v === null) return false;
  const proto = Object.getPrototypeOf(v);
  return (proto === Object.prototype || proto === null) && Object.keys(v).length === n;
}

const int = (v: unknown, min: number, max: number): v is number =>
  typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
const ref = (v: unknown): v is string => typeof v === 'string' && v.length >= 1 && v.length <= 128;
const epoch = (v: unknown): v is number => int(v, 0, INT32_MAX);

/** The handle op as the schema would output it, or undefined: let the schema decide. */
function handleOp(o: Row): TickHandle | undefined {
  const { startedAt } = o;
  if (
    !plain(o, 7) ||
    !ref(o.ref) ||
    !isId('session', o.sessionId) ||
    !epoch(o.epoch) ||
    typeof o.backend !== 'string' ||
    !BACKENDS.has(o.backend) ||
    typeof o.handle !== 'string' ||
    o.handle.length > TEXT_LIMITS.handle ||
    !HANDLE.test(o.handle) ||
    !(startedAt === null || (startedAt instanceof Date && Number.isFinite(startedAt.getTime())))
  )
    return undefined;
  return {
    op: 'handle',
    ref: o.ref,
    sessionId: o.sessionId,
    epoch: o.epoch,
    backend: o.backend as TickHandle['backend'],
    handle: o.handle,
    startedAt,
  };
}

/** The finish op as the schema would output it, or undefined: let the schema decide. */
function finishOp(o: Row): TickFinish | undefined {
  const { exitCode, reason, output, requeue } = o;
  if (
    !plain(o, 11) ||
    !ref(o.ref) ||
    !isId('session', o.sessionId) ||
    !epoch(o.epoch) ||
    (o.status !== 'succeeded' && o.status !== 'failed') ||
    !(exitCode === null || int(exitCode, -INT32_MAX - 1, INT32_MAX)) ||
    !(
      reason === null ||
      (typeof reason === 'string' && reason.length >= 1 && reason.length <= TEXT_LIMITS.reason)
    ) ||
    typeof o.userRecoverable !== 'boolean' ||
    typeof o.column !== 'string' ||
    !COLUMN.test(o.column)
  )
    return undefined;
  let out: TickFinish['output'] = null;
  if (output !== null) {
    if (
      !plain(output, 3) ||
      typeof output.text !== 'string' ||
      !int(output.totalBytes, 0, Number.MAX_SAFE_INTEGER) ||
      typeof output.truncated !== 'boolean'
    )
      return undefined;
    out = { text: output.text, totalBytes: output.totalBytes, truncated: output.truncated };
  }
  let next: TickFinish['requeue'] = null;
  if (requeue !== null) {
    if (!plain(requeue, 1) || !isId('session', requeue.sessionId)) return undefined;
    next = { sessionId: requeue.sessionId };
  }
  return {
    op: 'finish',
    ref: o.ref,
    sessionId: o.sessionId,
    epoch: o.epoch,
    status: o.status,
    exitCode: exitCode as number | null,
    reason: reason as string | null,
    userRecoverable: o.userRecoverable,
    output: out,
    column: o.column,
    requeue: next,
  };
}

const argOk = (a: unknown): a is string =>
  typeof a === 'string' && a.length <= L.argLength && !a.includes('\0') && isWellFormed(a);

/** The run spec as runSpecSchema outputs it (frozen, as its `.readonly()` does), or undefined. */
function specOf(v: unknown): TickEnqueue['spec'] | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as Row;
  const { image, command, env } = o;
  const hasEnv = Object.hasOwn(o, 'env');
  if (
    !plain(o, hasEnv ? 3 : 2) ||
    typeof image !== 'string' ||
    image.length < 1 ||
    image.length > L.imageLength ||
    !IMAGE.test(image) ||
    !Array.isArray(command) ||
    command.length < 1 ||
    command.length > L.commandArgs ||
    command[0] === '' ||
    !command.every(argOk)
  )
    return undefined;
  let chars = 0;
  for (const a of command) chars += a.length;
  // A UTF-16 unit is at most 3 bytes of UTF-8: only a long command needs counting.
  if (chars * 3 + command.length > L.commandBytes) {
    let bytes = 0;
    for (const a of command) bytes += Buffer.byteLength(a) + 1;
    if (bytes > L.commandBytes) return undefined;
  }
  const args = Object.freeze([...(command as string[])]);
  if (!hasEnv) return Object.freeze({ image, command: args });
  if (!plain(env, Object.keys(env as object).length)) return undefined;
  const vars: Record<string, string> = {};
  let n = 0;
  for (const [k, val] of Object.entries(env)) {
    if (
      k.length > L.envKeyLength ||
      !ENV_KEY.test(k) ||
      // A plain object drops it in silence; the schema refuses it by name.
      k === '__proto__' ||
      !argOk(val) ||
      val.length > L.envValueLength
    )
      return undefined;
    vars[k] = val;
    n += 1;
  }
  if (n > L.envEntries) return undefined;
  return Object.freeze({ image, command: args, env: vars });
}

/** The enqueue op as the schema would output it, or undefined: let the schema decide. */
function enqueueOp(o: Row): TickEnqueue | undefined {
  const { title } = o;
  const hasColumn = Object.hasOwn(o, 'column');
  if (
    !plain(o, hasColumn ? 8 : 7) ||
    !ref(o.ref) ||
    !isId('task', o.taskId) ||
    !isId('session', o.sessionId) ||
    typeof o.userId !== 'string' ||
    !NAME.test(o.userId) ||
    typeof title !== 'string' ||
    title.length < 1 ||
    title.length > TEXT_LIMITS.title ||
    title.trim() === '' ||
    CONTROL_CHARACTER.test(title) ||
    !isWellFormed(title) ||
    (hasColumn &&
      o.column !== undefined &&
      (typeof o.column !== 'string' || !COLUMN.test(o.column)))
  )
    return undefined;
  const spec = specOf(o.spec);
  if (spec === undefined) return undefined;
  const op: TickEnqueue = {
    op: 'enqueue',
    ref: o.ref,
    taskId: o.taskId,
    sessionId: o.sessionId,
    userId: o.userId,
    title,
    spec,
  };
  if (hasColumn) op.column = o.column as string;
  return op;
}

/**
 * A tick's head (everything but the ops' contents; at most `maxOps` of
 * them) as tickInput's schema outputs it, or undefined: let the schema decide.
 */
export function fastCheckedHead(input: unknown, maxOps: number): TickInput | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const o = input as Row;
  const { now, ops, resync, since, tailChars, changesMax } = o;
  // The optional keys, each checked only when present (undefined is allowed, as by zod).
  const has = {
    resync: Object.hasOwn(o, 'resync'),
    since: Object.hasOwn(o, 'since'),
    tailChars: Object.hasOwn(o, 'tailChars'),
    changesMax: Object.hasOwn(o, 'changesMax'),
  };
  const optional =
    Number(has.resync) + Number(has.since) + Number(has.tailChars) + Number(has.changesMax);
  if (
    !plain(o, 6 + optional) ||
    typeof o.owner !== 'string' ||
    !NAME.test(o.owner) ||
    !(now instanceof Date && Number.isFinite(now.getTime())) ||
    !int(o.globalCap, 0, MAX_RUNNING) ||
    !int(o.defaultUserCap, 0, MAX_RUNNING) ||
    !int(o.want, 0, MAX_RUNNING) ||
    !Array.isArray(ops) ||
    ops.length > maxOps ||
    (resync !== undefined && typeof resync !== 'boolean') ||
    (since !== undefined && !int(since, 0, Number.MAX_SAFE_INTEGER)) ||
    (tailChars !== undefined && !int(tailChars, 1, 1_000_000)) ||
    (changesMax !== undefined && !int(changesMax, 0, 100_000))
  )
    return undefined;
  const head: TickInput = {
    owner: o.owner,
    now,
    globalCap: o.globalCap,
    defaultUserCap: o.defaultUserCap,
    want: o.want,
    ops: [...ops],
  };
  if (has.resync) head.resync = resync as boolean;
  if (has.since) head.since = since as number;
  if (has.tailChars) head.tailChars = tailChars as number;
  if (has.changesMax) head.changesMax = changesMax as number;
  return head;
}

/**
 * An enqueue, handle or finish op that passes every rule of its schema, copied as
 * the schema would output it; undefined for anything else (other kinds,
 * and any op the schema might reject).
 *
 * @example
 * ```ts
 * const h = { op: 'handle', ref: '1', sessionId: 'ses_0123456789abcdef0123456789abcdef', epoch: 1, backend: 'simulated', handle: 'rt-x', startedAt: null };
 * fastCheckedOp(h) // => { ...h }
 * fastCheckedOp({ ...h, epoch: -1 }) // => undefined
 * fastCheckedOp({ ...h, extra: 1 }) // => undefined
 * ```
 */
export function fastCheckedOp(op: unknown): TickEnqueue | TickHandle | TickFinish | undefined {
  if (typeof op !== 'object' || op === null) return undefined;
  const o = op as Row;
  if (o.op === 'handle') return handleOp(o);
  if (o.op === 'finish') return finishOp(o);
  if (o.op === 'enqueue') return enqueueOp(o);
  return undefined;
}
