/**
 * `createRuntime`'s options: one defaults object, validated, unknown keys
 * rejected with a "did you mean" (the ws habit).
 */
import { randomUUID } from 'node:crypto';
import type { RuntimeOptions } from './runtimeTypes.js';

/** Defaults spread under the caller's options. */
export const RUNTIME_DEFAULTS = {
  pollMs: 5_000,
  adoptBudgetMs: 15 * 60 * 1000,
  reconcileMs: 60_000,
  ioTimeoutMs: 120_000,
  reconcileLock: false,
  dispatchPollMs: 1_000,
  positionPushMs: 100,
  storeDeadlineMs: 60_000,
} as const;

const KNOWN: ReadonlyArray<keyof RuntimeOptions> = [
  'db',
  'backend',
  'clock',
  'caps',
  'pollMs',
  'adoptBudgetMs',
  'reconcileMs',
  'nodeId',
  'bootId',
  'runnerImage',
  'liveness',
  'reconcileLock',
  'ioTimeoutMs',
  'heartbeatMs',
  'heartbeatStaleBeats',
  'passTimeoutMs',
  'inspect',
  'onError',
  'localMax',
  'notifications',
  'dispatchPollMs',
  'storeDeadlineMs',
  'isTransient',
  'positionPushMs',
];

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

export type ResolvedRuntimeOptions = Omit<RuntimeOptions, keyof typeof RUNTIME_DEFAULTS> & {
  pollMs: number;
  adoptBudgetMs: number;
  reconcileMs: number;
  ioTimeoutMs: number;
  reconcileLock: boolean;
  dispatchPollMs: number;
  positionPushMs: number;
  storeDeadlineMs: number;
  heartbeatMs: number;
  heartbeatStaleBeats: number;
  passTimeoutMs: number;
  bootId: string;
  onError: (error: unknown) => void;
};

/**
 * Checks the options and fills in the defaults.
 *
 * @example
 * ```ts
 * const base = { db: {}, backend: {}, clock: {}, caps: { maxRunning: 2, defaultUserCap: 1 }, nodeId: 'n1' }
 * resolveRuntimeOptions(base).reconcileMs // => 60000
 * resolveRuntimeOptions(base).heartbeatMs // => 20000
 * resolveRuntimeOptions({ ...base, reconcileMs: 3000 }).heartbeatMs // => 1000
 * resolveRuntimeOptions(base).heartbeatStaleBeats // => 3
 * resolveRuntimeOptions(base).passTimeoutMs // => 600000
 * resolveRuntimeOptions({ ...base, heartbeatStaleBeats: 0 }) // throws RuntimeOptionError
 * resolveRuntimeOptions({ ...base, passTimeoutMs: -1 }) // throws RuntimeOptionError
 * resolveRuntimeOptions({ ...base, pollMS: 5 }) // throws RUNTIME_INVALID_OPTION
 * resolveRuntimeOptions({ ...base, pollMs: 0 }) // throws RuntimeOptionError
 * resolveRuntimeOptions({ ...base, nodeId: 'a@b' }) // throws RuntimeOptionError
 * resolveRuntimeOptions({ ...base, caps: { maxRunning: -1, defaultUserCap: 1 } }) // throws RuntimeOptionError
 * ```
 */
export function resolveRuntimeOptions(options: RuntimeOptions): ResolvedRuntimeOptions {
  for (const key of Object.keys(options)) {
    if ((KNOWN as readonly string[]).includes(key)) continue;
    const near = KNOWN.find((k) => k.toLowerCase() === key.toLowerCase());
    throw new RuntimeOptionError(key, `is unknown${near ? `; did you mean ${near}?` : ''}`);
  }
  for (const key of ['db', 'backend', 'clock'] as const) {
    if (typeof options[key] !== 'object' || options[key] === null) {
      throw new RuntimeOptionError(key, 'is required');
    }
  }
  const o = { ...RUNTIME_DEFAULTS, ...options };
  const derived = {
    heartbeatMs: o.heartbeatMs ?? Math.max(1, Math.round(o.reconcileMs / 3)),
    heartbeatStaleBeats: o.heartbeatStaleBeats ?? 3,
    passTimeoutMs: o.passTimeoutMs ?? Math.max(o.reconcileMs, o.ioTimeoutMs) * 5,
  };
  for (const key of [
    'pollMs',
    'adoptBudgetMs',
    'reconcileMs',
    'ioTimeoutMs',
    'heartbeatMs',
    'passTimeoutMs',
    'dispatchPollMs',
    'positionPushMs',
    'storeDeadlineMs',
  ] as const) {
    const v = key in derived ? derived[key as keyof typeof derived] : o[key as keyof typeof o];
    if (!(typeof v === 'number' && Number.isFinite(v) && v > 0)) {
      throw new RuntimeOptionError(key, `must be a number > 0, got ${String(v)}`);
    }
  }
  const caps = o.caps as unknown;
  const capOk = (v: unknown) => Number.isInteger(v) && (v as number) >= 0;
  if (
    typeof caps !== 'object' ||
    caps === null ||
    !capOk((caps as Record<string, unknown>).maxRunning) ||
    !capOk((caps as Record<string, unknown>).defaultUserCap)
  ) {
    throw new RuntimeOptionError('caps', 'needs integers maxRunning >= 0 and defaultUserCap >= 0');
  }
  // The owner is `${nodeId}@${bootId}`: an @ inside either would make it ambiguous.
  const name = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$/;
  if (typeof o.nodeId !== 'string' || !name.test(o.nodeId)) {
    throw new RuntimeOptionError('nodeId', 'must be 1-100 of [A-Za-z0-9_.:-]');
  }
  if (o.localMax !== undefined && !capOk(o.localMax)) {
    throw new RuntimeOptionError('localMax', 'must be an integer >= 0');
  }
  const bootId = o.bootId ?? randomUUID().slice(0, 8);
  if (!name.test(bootId))
    throw new RuntimeOptionError('bootId', 'must be 1-100 of [A-Za-z0-9_.:-]');
  if (!(Number.isInteger(derived.heartbeatStaleBeats) && derived.heartbeatStaleBeats >= 1)) {
    throw new RuntimeOptionError('heartbeatStaleBeats', 'must be an integer >= 1');
  }
  return {
    ...o,
    ...derived,
    bootId,
    onError: o.onError ?? ((error: unknown) => process.emitWarning(error as Error)),
  };
}
