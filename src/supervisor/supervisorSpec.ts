/**
 * A supervisor's own configuration: one defaults object, validated, with
 * unknown keys rejected (the ws habit).
 */
import type { ChildSpec, SupervisorSpec } from './childSpec.js';
import { type SupervisorClock, systemClock } from './clock.js';
import { ChildSpecError, type SupervisorError } from './errors.js';
import { guardObserver } from './guardedObserver.js';
import { InspectionGate, type InspectionObserver } from './inspectionGate.js';
import type { Registry } from './Registry.js';
import { DEFAULT_INTENSITY, DEFAULT_PERIOD_MS } from './restartIntensity.js';
import type { AutoShutdown, Strategy } from './restartPolicy.js';

export type { SupervisorSpec } from './childSpec.js';

/** The runtime a tree shares; nested supervisors inherit it from their parent. */
export interface SupervisorRuntime {
  clock: SupervisorClock;
  /**
   * An observer: passed to every child's createActor, and fed the
   * supervisor's own events. An `InspectionGate`: the supervisor's events
   * always, the children's frames only while the gate is open.
   */
  inspect?: InspectionObserver | InspectionGate;
  registry?: Registry;
  /** Jitter source for backoff; injectable for tests. */
  random: () => number;
  /**
   * Where the tree reports what it cannot hand to anyone else: a listener
   * that threw (`ListenerError`), or one of its own jobs that failed
   * (`SupervisorJobError`, the supervisor then exits with `{ error }`).
   * Default: `console.error`. It must not throw (a throw is rethrown as
   * uncaught, on a microtask).
   */
  onError: (error: SupervisorError) => void;
}

export interface ResolvedSupervisorSpec {
  id: string;
  children: ChildSpec[];
  strategy: Strategy;
  intensity: number;
  periodMs: number;
  autoShutdown: AutoShutdown;
  maxChildren: number;
  template?: ChildSpec;
}

const KNOWN = new Set([
  'id',
  'children',
  'strategy',
  'intensity',
  'periodMs',
  'autoShutdown',
  'maxChildren',
  'template',
]);
const STRATEGIES = new Set(['one_for_one', 'one_for_all', 'rest_for_one']);
const AUTO = new Set(['never', 'any_significant', 'all_significant']);

let supervisorSeq = 0;

/**
 * Fills in the defaults and rejects bad options with a `ChildSpecError`
 * naming the field. Child specs themselves are checked by validateChildSpec.
 *
 * @example
 * ```ts
 * resolveSupervisorSpec({ id: 'root', children: [] }).intensity // => 3
 * resolveSupervisorSpec({ id: 'root', children: [] }).periodMs // => 5000
 * resolveSupervisorSpec({ id: 'root', children: [], strategy: 'one_for_some' }) // throws ChildSpecError
 * resolveSupervisorSpec({ id: 'root', children: [], intensty: 1 }) // throws INVALID_CHILD_SPEC
 * ```
 */
export function resolveSupervisorSpec(spec: SupervisorSpec): ResolvedSupervisorSpec {
  for (const key of Object.keys(spec)) {
    if (!KNOWN.has(key)) throw new ChildSpecError(`supervisor.${key}`, 'unknown option');
  }
  const {
    strategy = 'one_for_one',
    intensity = DEFAULT_INTENSITY,
    periodMs = DEFAULT_PERIOD_MS,
    autoShutdown = 'never',
    maxChildren = Number.POSITIVE_INFINITY,
  } = spec;
  if (!Array.isArray(spec.children))
    throw new ChildSpecError('supervisor.children', 'must be an array');
  if (!STRATEGIES.has(strategy))
    throw new ChildSpecError('supervisor.strategy', `unknown strategy ${strategy}`);
  if (!(Number.isInteger(intensity) && intensity >= 0)) {
    throw new ChildSpecError('supervisor.intensity', 'must be an integer >= 0');
  }
  if (!(Number.isFinite(periodMs) && periodMs > 0)) {
    throw new ChildSpecError('supervisor.periodMs', 'must be a number > 0');
  }
  if (!AUTO.has(autoShutdown))
    throw new ChildSpecError('supervisor.autoShutdown', `unknown ${autoShutdown}`);
  if (!(maxChildren >= 0)) throw new ChildSpecError('supervisor.maxChildren', 'must be >= 0');
  supervisorSeq += 1;
  return {
    id: spec.id ?? `supervisor-${supervisorSeq}`,
    children: spec.children,
    strategy,
    intensity,
    periodMs,
    autoShutdown,
    maxChildren,
    ...(spec.template ? { template: spec.template } : {}),
  };
}

/** The default `onError`: written out, since nobody asked for the error. */
const printError = (error: SupervisorError): void => console.error(error);

/** The runtime with its defaults: the system clock, Math.random, console.error. */
export function resolveRuntime(runtime: Partial<SupervisorRuntime> = {}): SupervisorRuntime {
  const onError = runtime.onError ?? printError;
  const { inspect } = runtime;
  // An observer's throw must not fail the actor XState was stepping (guardedObserver.ts).
  if (inspect instanceof InspectionGate) inspect.reportTo(onError);
  return {
    clock: systemClock,
    random: Math.random,
    ...runtime,
    ...(inspect === undefined || inspect instanceof InspectionGate
      ? {}
      : { inspect: guardObserver(inspect, onError) }),
    onError,
  };
}
