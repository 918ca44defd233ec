/**
 * Child specs are data, validated by a function that starts nothing (OTP's
 * `check_childspecs`), then resolved with OTP's defaults.
 */
import type { AnyActorLogic } from 'xstate';
import type { BackoffOptions } from './backoff.js';
import { ChildSpecError } from './errors.js';
import type { AutoShutdown, RestartType, Strategy } from './restartPolicy.js';

/** `brutal_kill`: stop at once; ms: graceful stop, then kill; `infinity`: wait. */
export type ShutdownSpec = 'brutal_kill' | 'infinity' | number;

/** How to start a child: XState logic plus input, or a nested supervisor. */
export type ChildStart = { logic: AnyActorLogic; input?: unknown } | { supervisor: SupervisorSpec };

export interface ChildSpec {
  id: string;
  start: ChildStart;
  /** Default `permanent`. */
  restart?: RestartType;
  /** Default 5000 ms for workers, `infinity` for supervisors (OTP's). */
  shutdown?: ShutdownSpec;
  /** Inferred from `start` when omitted. */
  type?: 'worker' | 'supervisor';
  /** With the supervisor's `autoShutdown`; only transient or temporary children. */
  significant?: boolean;
  /** A Registry name that follows the child across restarts. */
  name?: string;
  /** Akka-style restart backoff for this child. */
  backoff?: BackoffOptions;
}

/**
 * What a supervisor supervises and how; nestable as a child's `start`.
 * Declared here, beside ChildSpec, because the two are one recursive type (a
 * child may be a supervisor); supervisorSpec.ts validates it.
 */
export interface SupervisorSpec {
  id?: string;
  children: ChildSpec[];
  strategy?: Strategy;
  /** Restarts allowed in `periodMs` before giving up. Default 3 (Elixir's). */
  intensity?: number;
  periodMs?: number;
  autoShutdown?: AutoShutdown;
  /** Dynamic supervisors: cap on running children. */
  maxChildren?: number;
  /** Dynamic supervisors: the spec `startChild({ input })` starts copies of. */
  template?: ChildSpec;
}

/** A child spec that starts a nested supervisor. */
export type SupervisorChildSpec = ChildSpec & { start: { supervisor: SupervisorSpec } };
/** A child spec that starts XState logic `L`. */
export type WorkerChildSpec<L extends AnyActorLogic = AnyActorLogic> = ChildSpec & {
  start: { logic: L; input?: unknown };
};

/** A spec with every default filled in. */
export interface ResolvedChildSpec extends ChildSpec {
  restart: RestartType;
  shutdown: ShutdownSpec;
  type: 'worker' | 'supervisor';
  significant: boolean;
}

const KNOWN = new Set([
  'id',
  'start',
  'restart',
  'shutdown',
  'type',
  'significant',
  'name',
  'backoff',
]);
const RESTARTS = new Set(['permanent', 'transient', 'temporary']);

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

function nonNegative(v: unknown): boolean {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0;
}

/**
 * Checks a child spec and fills in OTP's defaults; throws a `ChildSpecError`
 * whose `field` names the first bad field. Starts nothing.
 *
 * @example
 * ```ts
 * const logic = { transition: (s) => s, getInitialSnapshot: () => ({ status: 'active' }) }
 * validateChildSpec({ id: 'a', start: { logic } }).restart // => 'permanent'
 * validateChildSpec({ id: 'a', start: { logic } }).shutdown // => 5000
 * validateChildSpec({ id: 'a', start: { supervisor: { children: [] } } }).shutdown // => 'infinity'
 * validateChildSpec({ id: '', start: { logic } }) // throws ChildSpecError
 * validateChildSpec({ id: 'a', start: { logic }, shutdown: -1 }).id // throws INVALID_CHILD_SPEC
 * validateChildSpec({ id: 'a', start: { logic }, restart: 'permanent', significant: true }) // throws ChildSpecError
 * ```
 */
export function validateChildSpec(spec: unknown): ResolvedChildSpec {
  if (!isRecord(spec)) throw new ChildSpecError('spec', 'must be an object');
  for (const key of Object.keys(spec)) {
    if (!KNOWN.has(key)) throw new ChildSpecError(key, 'unknown field');
  }
  const {
    id,
    start,
    restart = 'permanent',
    shutdown,
    type,
    significant = false,
    name,
    backoff,
  } = spec;
  if (typeof id !== 'string' || id === '')
    throw new ChildSpecError('id', 'must be a non-empty string');
  if (!isRecord(start))
    throw new ChildSpecError('start', 'must be { logic, input } or { supervisor }');
  const isSupervisor = 'supervisor' in start;
  if (isSupervisor) {
    if (!isRecord(start.supervisor) || !Array.isArray(start.supervisor.children)) {
      throw new ChildSpecError('start.supervisor', 'must be a supervisor spec with children');
    }
  } else if (!isRecord(start.logic) || typeof start.logic.transition !== 'function') {
    throw new ChildSpecError('start.logic', 'must be XState actor logic');
  }
  if (typeof restart !== 'string' || !RESTARTS.has(restart)) {
    throw new ChildSpecError('restart', 'must be permanent, transient or temporary');
  }
  const inferred = isSupervisor ? 'supervisor' : 'worker';
  if (type !== undefined && type !== inferred) {
    throw new ChildSpecError('type', `is ${String(type)} but start describes a ${inferred}`);
  }
  const resolvedShutdown = shutdown ?? (isSupervisor ? 'infinity' : 5_000);
  if (
    resolvedShutdown !== 'brutal_kill' &&
    resolvedShutdown !== 'infinity' &&
    !nonNegative(resolvedShutdown)
  ) {
    throw new ChildSpecError('shutdown', "must be 'brutal_kill', 'infinity' or milliseconds >= 0");
  }
  if (typeof significant !== 'boolean')
    throw new ChildSpecError('significant', 'must be a boolean');
  if (significant && restart === 'permanent') {
    throw new ChildSpecError('significant', 'a permanent child cannot be significant (OTP)');
  }
  if (name !== undefined && (typeof name !== 'string' || name === '')) {
    throw new ChildSpecError('name', 'must be a non-empty string');
  }
  if (backoff !== undefined) validateBackoff(backoff);
  // One fixed shape for every resolved spec (no spread of the caller's
  // object): a dynamic supervisor resolves one per startChild.
  return {
    id,
    start: start as ChildStart,
    restart: restart as RestartType,
    shutdown: resolvedShutdown as ShutdownSpec,
    type: inferred,
    significant,
    name: name as string | undefined,
    backoff: backoff as BackoffOptions | undefined,
  };
}

function validateBackoff(b: unknown): void {
  if (!isRecord(b)) throw new ChildSpecError('backoff', 'must be an object');
  for (const f of ['minMs', 'maxMs', 'randomFactor', 'resetAfterMs'] as const) {
    if (!nonNegative(b[f])) throw new ChildSpecError(`backoff.${f}`, 'must be a number >= 0');
  }
  if ((b.maxMs as number) < (b.minMs as number)) {
    throw new ChildSpecError('backoff.maxMs', 'must be >= backoff.minMs');
  }
  if (
    b.maxRestarts !== undefined &&
    !(Number.isInteger(b.maxRestarts) && nonNegative(b.maxRestarts))
  ) {
    throw new ChildSpecError('backoff.maxRestarts', 'must be an integer >= 0');
  }
}
