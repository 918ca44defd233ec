/**
 * The client's reading of a server frame: the checks of
 * boardProtocol.ts's `serverFrameSchema`, written out by hand. The board
 * page's first paint waits on it: zod's 30 KB took ~10 ms to load and set up
 * on a busy machine before the page's script could start, and parsing the
 * first snapshot (100 cards and more) with it as long again; these few
 * checks take a fraction of that. A property test
 * (test/board/serverFrameCheck.test.ts) holds the two to the same verdict
 * and the same output on valid frames and on broken ones, so a change to
 * the schema that is not made here fails it.
 *
 * Like zod's objects, it returns new objects with the schema's keys only.
 *
 * Imports nothing from `node:*`: the browser bundle includes this file.
 */

import type { BoardCard } from './boardPort.js';
import type { ServerFrame } from './boardProtocol.js';
import { ERROR_CODES, PROTOCOL_VERSION } from './boardProtocolConstants.js';

/** A frame that is not one the protocol allows: `message` names the field and what was wrong. */
export class ServerFrameError extends Error {
  override readonly name = 'ServerFrameError';
  readonly code = 'BAD_SERVER_FRAME';
}

/** Checks `v` (found at `path`) and returns what the frame holds there. */
type Check<T> = (v: unknown, path: string) => T;
/** A key that may be missing. */
interface Optional<T> {
  optional: Check<T>;
}
type Shape = Record<string, Check<unknown> | Optional<unknown>>;
type Out<S extends Shape> = {
  [K in keyof S as S[K] extends Optional<unknown> ? never : K]: S[K] extends Check<infer T>
    ? T
    : never;
} & {
  [K in keyof S as S[K] extends Optional<unknown> ? K : never]?: S[K] extends Optional<infer T>
    ? T
    : never;
};

function fail(path: string, expected: string, v: unknown): never {
  const got =
    v === null || typeof v === 'number' || typeof v === 'boolean'
      ? String(v)
      : typeof v === 'string'
        ? JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)
        : Array.isArray(v)
          ? 'an array'
          : typeof v;
  throw new ServerFrameError(`${path || 'frame'}: expected ${expected}, got ${got}`);
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const str: Check<string> = (v, p) => (typeof v === 'string' ? v : fail(p, 'a string', v));
const iso: Check<string> = (v, p) =>
  typeof v === 'string' && v.length > 0 ? v : fail(p, 'a non-empty string', v);
const int: Check<number> = (v, p) =>
  Number.isSafeInteger(v) ? (v as number) : fail(p, 'an integer', v);
const num: Check<number> = (v, p) =>
  typeof v === 'number' && Number.isFinite(v) ? v : fail(p, 'a number', v);
const bool: Check<boolean> = (v, p) => (typeof v === 'boolean' ? v : fail(p, 'a boolean', v));

function oneOf<const T extends string | number>(values: readonly T[]): Check<T> {
  return (v, p) => (values.includes(v as T) ? (v as T) : fail(p, `one of ${values.join(', ')}`, v));
}

function literal<const T extends string | number>(value: T): Check<T> {
  return (v, p) => (v === value ? value : fail(p, JSON.stringify(value), v));
}

function nullable<T>(check: Check<T>): Check<T | null> {
  return (v, p) => (v === null ? null : check(v, p));
}

function optional<T>(check: Check<T>): Optional<T> {
  return { optional: check };
}

function arrayOf<T>(check: Check<T>): Check<T[]> {
  return (v, p) => {
    if (!Array.isArray(v)) return fail(p, 'an array', v);
    const out: T[] = new Array(v.length);
    for (let i = 0; i < v.length; i++) out[i] = check(v[i], `${p}[${i}]`);
    return out;
  };
}

/** Values checked by `check`, by string key (a new record: values keep only their schema's keys). */
function recordOf<T>(check: Check<T>): Check<Record<string, T>> {
  return (v, p) => {
    if (!isRecord(v)) return fail(p, 'an object', v);
    // fromEntries defines own keys, so a "__proto__" key stays data.
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, check(x, `${p}.${k}`)]));
  };
}

function object<S extends Shape>(shape: S): Check<Out<S>> {
  const keys = Object.keys(shape);
  return (v, p) => {
    if (!isRecord(v)) return fail(p, 'an object', v);
    const out: Record<string, unknown> = {};
    for (const k of keys) {
      const field = shape[k]!;
      const at = p === '' ? k : `${p}.${k}`;
      if (typeof field === 'function') out[k] = field(v[k], at);
      else if (v[k] !== undefined) out[k] = field.optional(v[k], at);
    }
    return out as Out<S>;
  };
}

const atCap = nullable(object({ running: int, max: int }));

const card: Check<BoardCard> = object({
  taskId: str,
  userId: str,
  title: str,
  column: oneOf(['queued', 'running', 'done', 'failed']),
  sessionId: str,
  attempt: int,
  status: oneOf(['queued', 'running', 'succeeded', 'failed', 'cancelled']),
  queued: nullable(object({ position: int, since: iso, atCap: optional(atCap) })),
  running: nullable(object({ since: iso, until: optional(nullable(iso)) })),
  failure: nullable(object({ reason: str, recoverable: bool })),
  exitCode: nullable(int),
  lastOutput: arrayOf(str),
  updatedAt: iso,
  previous: optional(nullable(object({ attempt: int, reason: str }))),
  timeLimitMs: optional(nullable(int)),
});

const counts = object({ queued: int, running: int, done: int, failed: int });

const FRAMES: Record<ServerFrame['type'], Check<ServerFrame>> = {
  hello: object({
    type: literal('hello'),
    v: literal(PROTOCOL_VERSION),
    userId: nullable(str),
    heartbeatMs: num,
  }),
  snapshot: object({
    type: literal('snapshot'),
    epoch: str,
    seq: int,
    counts,
    users: arrayOf(str),
    cards: arrayOf(card),
  }),
  update: object({
    type: literal('update'),
    seq: int,
    counts: optional(counts),
    users: optional(arrayOf(str)),
    cards: arrayOf(card),
    positions: optional(recordOf(int)),
    atCap: optional(recordOf(atCap)),
    removed: arrayOf(str),
  }),
  pong: object({ type: literal('pong'), id: str }),
  error: object({ type: literal('error'), code: oneOf(ERROR_CODES), message: str }),
};

/**
 * The frame `data` (parsed JSON) is, checked as the schema checks it, or a
 * {@link ServerFrameError} naming the first field that is wrong.
 *
 * @example
 * ```ts
 * readServerFrame({ type: 'pong', id: 'live', extra: 1 }) // => { type: 'pong', id: 'live' }
 * ```
 */
export function readServerFrame(data: unknown): ServerFrame {
  const type = isRecord(data) ? data.type : undefined;
  const check =
    typeof type === 'string' && Object.hasOwn(FRAMES, type)
      ? FRAMES[type as ServerFrame['type']]
      : null;
  if (check === null) return fail('type', `one of ${Object.keys(FRAMES).join(', ')}`, type);
  return check(data, '');
}
