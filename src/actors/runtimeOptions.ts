/**
 * `createRuntime`'s options: one defaults object, one zod schema, unknown
 * keys rejected with a "did you mean" (the ws habit). Only the store and the
 * backend have no default; a library user's runtime is
 * `createRuntime({ db, backend })` (docs/library.md).
 */

import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { z } from 'zod';
import { timeLimitMs } from '../board/timeLimit.js';
import { didYouMean } from '../common/didYouMean.js';
import { firstIssue } from '../common/firstIssue.js';
import { clampTimerMs, MAX_TIMER_MS } from '../common/maxTimerMs.js';
import { systemClock } from '../supervisor/clock.js';
import type { RuntimeCaps, RuntimeOptions } from './runtimeTypes.js';

/** Defaults spread under the caller's options (clock and nodeId are filled in at resolve). */
export const RUNTIME_DEFAULTS = {
  caps: { maxRunning: 4, defaultUserCap: 2 },
  pollMs: 5_000,
  adoptBudgetMs: 15 * 60 * 1000,
  reconcileMs: 60_000,
  retentionMs: 7 * 24 * 60 * 60 * 1000,
  ioTimeoutMs: 120_000,
  dispatchPollMs: 1_000,
  positionPushMs: 100,
  storeDeadlineMs: 60_000,
  commandOutageMs: 10_000,
  livenessPollMs: 250,
  liveOutputMs: 1_000,
} as const;

/**
 * The machine's name, reduced to what a node id may hold: the default
 * `nodeId` of the runtime and of the CLI.
 *
 * @example
 * ```ts
 * defaultNodeId('my host (1)') // => 'my-host--1-'
 * defaultNodeId('---') // => 'node'
 * ```
 */
export function defaultNodeId(host: string = hostname()): string {
  const cleaned = host.replace(/[^A-Za-z0-9_.:-]/g, '-').replace(/^[^A-Za-z0-9]+/, '');
  return cleaned.slice(0, 100) || 'node';
}

/** A bad option, named. */
export class RuntimeOptionError extends Error {
  override readonly name = 'RuntimeOptionError';
  readonly code = 'RUNTIME_INVALID_OPTION';
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(`createRuntime: ${field} ${problem}`);
  }
}

/** An object with these methods (the ports: store handle parts, backend, clock). */
const withMethods = (what: string, methods: readonly string[]) =>
  z.custom<object>(
    (v) =>
      typeof v === 'object' &&
      v !== null &&
      methods.every((m) => typeof (v as Record<string, unknown>)[m] === 'function'),
    `must be ${what} (with ${methods.join(', ')})`,
  );
const fn = z.custom<(...args: never[]) => unknown>(
  (v) => typeof v === 'function',
  'must be a function',
);
const ms = z
  .number()
  .finite()
  .positive('must be a number > 0')
  .max(MAX_TIMER_MS, `must be at most ${MAX_TIMER_MS} (ms, ~24.8 days: a timer's limit)`);
const cap = z.number().int().min(0, 'must be an integer >= 0');
// The owner is `${nodeId}@${bootId}`: an @ inside either would make it ambiguous.
const name = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$/, 'must be 1-100 of [A-Za-z0-9_.:-]');

const schema = z.object({
  db: z.custom<object>(
    (v) => typeof v === 'object' && v !== null,
    'is required: the store, `(await connect(...)).db` after `migrate`',
  ),
  backend: withMethods('a ContainerBackend', ['start', 'attach', 'observe', 'remove', 'ping']),
  clock: withMethods('a clock', ['now', 'setTimeout', 'clearTimeout']).optional(),
  caps: z.strictObject({ maxRunning: cap, defaultUserCap: cap }).optional(),
  pollMs: ms.optional(),
  adoptBudgetMs: ms.optional(),
  reconcileMs: ms.optional(),
  retentionMs: ms.nullable().optional(),
  defaultTimeLimitMs: timeLimitMs.nullable().optional(),
  nodeId: name.optional(),
  bootId: name.optional(),
  runnerImage: z.string().min(1).max(255).optional(),
  liveness: withMethods('an OwnerLiveness', ['isAlive']).optional(),
  heartbeatMs: ms.optional(),
  heartbeatStaleBeats: z.number().int().min(1, 'must be an integer >= 1').optional(),
  passTimeoutMs: ms.optional(),
  reconcileLock: z.boolean().optional(),
  ioTimeoutMs: ms.optional(),
  inspect: z.union([fn, z.object({})], 'must be an observer or a function').optional(),
  onError: fn.optional(),
  localMax: cap.optional(),
  notifications: withMethods('notifications', ['listen']).optional(),
  dispatchPollMs: ms.optional(),
  positionPushMs: ms.optional(),
  liveOutputMs: ms.nullable().optional(),
  storeDeadlineMs: ms.optional(),
  commandOutageMs: ms.optional(),
  isTransient: fn.optional(),
  bootLock: z
    .custom<object>(
      (v) =>
        typeof v === 'object' &&
        v !== null &&
        'holdBootLock' in v &&
        (v.holdBootLock === null || typeof v.holdBootLock === 'function'),
      'must be the store handle (with holdBootLock)',
    )
    .optional(),
  livenessPollMs: ms.optional(),
  watchBeats: z.boolean().optional(),
} satisfies Record<keyof RuntimeOptions, z.ZodType>);

const KNOWN = Object.keys(schema.shape);

export type ResolvedRuntimeOptions = Omit<
  RuntimeOptions,
  keyof typeof RUNTIME_DEFAULTS | 'clock' | 'nodeId'
> & {
  clock: NonNullable<RuntimeOptions['clock']>;
  caps: RuntimeCaps;
  nodeId: string;
  pollMs: number;
  adoptBudgetMs: number;
  reconcileMs: number;
  retentionMs: number | null;
  ioTimeoutMs: number;
  reconcileLock: boolean;
  dispatchPollMs: number;
  positionPushMs: number;
  liveOutputMs: number | null;
  storeDeadlineMs: number;
  commandOutageMs: number;
  livenessPollMs: number;
  heartbeatMs: number;
  heartbeatStaleBeats: number;
  watchBeats: boolean;
  passTimeoutMs: number;
  bootId: string;
  onError: (error: unknown) => void;
};

/**
 * Checks the options and fills in the defaults.
 *
 * @example
 * ```ts
 * const backend = { start() {}, attach() {}, observe() {}, remove() {}, ping() {} }
 * const base = { db: {}, backend }
 * resolveRuntimeOptions(base).reconcileMs // => 60000
 * resolveRuntimeOptions(base).retentionMs // => 604800000
 * resolveRuntimeOptions({ ...base, defaultTimeLimitMs: 3600000 }).defaultTimeLimitMs // => 3600000
 * resolveRuntimeOptions({ ...base, defaultTimeLimitMs: 10 }) // throws RuntimeOptionError
 * resolveRuntimeOptions({ ...base, retentionMs: null }).retentionMs // => null
 * resolveRuntimeOptions({ ...base, retentionMs: undefined }).retentionMs // => 604800000
 * resolveRuntimeOptions({ ...base, retentionMs: 0 }) // throws RuntimeOptionError
 * resolveRuntimeOptions(base).liveOutputMs // => 1000
 * resolveRuntimeOptions({ ...base, liveOutputMs: null }).liveOutputMs // => null
 * resolveRuntimeOptions({ ...base, liveOutputMs: 0 }) // throws RuntimeOptionError
 * resolveRuntimeOptions(base).caps // => { maxRunning: 4, defaultUserCap: 2 }
 * typeof resolveRuntimeOptions(base).clock.now() // => 'number'
 * resolveRuntimeOptions({ ...base, nodeId: 'n1' }).nodeId // => 'n1'
 * resolveRuntimeOptions(base).heartbeatMs // => 20000
 * resolveRuntimeOptions({ ...base, reconcileMs: 3000 }).heartbeatMs // => 1000
 * resolveRuntimeOptions(base).heartbeatStaleBeats // => 3
 * resolveRuntimeOptions(base).passTimeoutMs // => 600000
 * resolveRuntimeOptions(base).reconcileLock // => false
 * resolveRuntimeOptions({ ...base, bootLock: { holdBootLock: () => null } }).reconcileLock // => true
 * resolveRuntimeOptions({ ...base, bootLock: { holdBootLock: null } }).reconcileLock // => false
 * resolveRuntimeOptions({ ...base, bootLock: { holdBootLock: () => null }, reconcileLock: false }).reconcileLock // => false
 * const pooled = { holdBootLock: null, pooler: 'transaction' }
 * resolveRuntimeOptions({ ...base, bootLock: pooled }).watchBeats // => true
 * resolveRuntimeOptions({ ...base, bootLock: pooled, watchBeats: false }).watchBeats // => false
 * resolveRuntimeOptions(base).watchBeats // => false
 * resolveRuntimeOptions({ ...base, bootLock: pooled, reconcileLock: true }) // throws RuntimeOptionError
 * resolveRuntimeOptions({ ...base, bootLock: {} }) // throws RuntimeOptionError
 * resolveRuntimeOptions({ ...base, heartbeatStaleBeats: 0 }) // throws RuntimeOptionError
 * resolveRuntimeOptions({ ...base, passTimeoutMs: -1 }) // throws RuntimeOptionError
 * resolveRuntimeOptions({ ...base, reconcileMs: 3_000_000_000 }) // throws RuntimeOptionError
 * resolveRuntimeOptions({ ...base, reconcileMs: 1_000_000_000 }).passTimeoutMs // => 2147483647
 * resolveRuntimeOptions({ ...base, pollMS: 5 }) // throws RuntimeOptionError
 * resolveRuntimeOptions({ ...base, reconcileMS: 5 }) // throws RUNTIME_INVALID_OPTION
 * resolveRuntimeOptions({ ...base, pollMs: 0 }) // throws RuntimeOptionError
 * resolveRuntimeOptions({ ...base, nodeId: 'a@b' }) // throws RuntimeOptionError
 * resolveRuntimeOptions({ ...base, caps: { maxRunning: -1, defaultUserCap: 1 } }) // throws RuntimeOptionError
 * resolveRuntimeOptions({ db: {} }) // throws RuntimeOptionError
 * ```
 */
export function resolveRuntimeOptions(options: RuntimeOptions): ResolvedRuntimeOptions {
  if (typeof options !== 'object' || options === null) {
    throw new RuntimeOptionError('options', 'must be an object with at least db and backend');
  }
  for (const key of Object.keys(options)) {
    if (KNOWN.includes(key)) continue;
    const near = didYouMean(key, KNOWN);
    throw new RuntimeOptionError(key, `is unknown${near ? `; did you mean ${near}?` : ''}`);
  }
  const parsed = schema.safeParse(options);
  if (!parsed.success) {
    const { field, message } = firstIssue(parsed.error, 'options');
    throw new RuntimeOptionError(field, message);
  }
  // The caller's objects, not zod's copies: the store and the backend keep
  // their identity. A key given as undefined takes its default, as one left out does.
  const given = Object.fromEntries(
    Object.entries(options).filter(([, v]) => v !== undefined),
  ) as RuntimeOptions;
  const o = { ...RUNTIME_DEFAULTS, ...given };
  const derived = {
    heartbeatMs: o.heartbeatMs ?? Math.max(1, Math.round(o.reconcileMs / 3)),
    heartbeatStaleBeats: o.heartbeatStaleBeats ?? 3,
    passTimeoutMs: o.passTimeoutMs ?? clampTimerMs(Math.max(o.reconcileMs, o.ioTimeoutMs) * 5),
    // On a Postgres server (a boot lock can be held) one Reconciler acts at a
    // time; PGlite's single connection could not even take the lock.
    reconcileLock:
      o.reconcileLock ?? (o.bootLock !== undefined && o.bootLock.holdBootLock !== null),
    // Behind a transaction pooler no boot holds a lock: watch the beats instead.
    watchBeats: o.watchBeats ?? o.bootLock?.pooler === 'transaction',
  };
  // Taken on a pooled server connection, the Reconciler's session lock would
  // outlive its node there, and no pass would run again on any node.
  if (o.bootLock?.pooler === 'transaction' && o.reconcileLock === true)
    throw new RuntimeOptionError(
      'reconcileLock',
      'cannot be held behind a transaction pooler (the store handle says pooler: transaction): leave it unset',
    );
  if (!(derived.heartbeatMs > 0 && derived.passTimeoutMs > 0)) {
    throw new RuntimeOptionError('heartbeatMs', 'must be a number > 0');
  }
  return {
    ...o,
    ...derived,
    clock: o.clock ?? systemClock,
    nodeId: o.nodeId ?? defaultNodeId(),
    bootId: o.bootId ?? randomUUID().slice(0, 8),
    onError: o.onError ?? ((error: unknown) => process.emitWarning(error as Error)),
  };
}
