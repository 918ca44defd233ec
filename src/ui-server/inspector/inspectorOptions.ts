/**
 * The inspector's options: one defaults object, every limit explicit,
 * unknown keys rejected with a "did you mean".
 */
import { pino } from 'pino';
import { didYouMean } from '../../common/didYouMean.js';
import type { HubClock } from './InspectorHub.js';
import type { SafeJsonLimits } from './safeJson.js';

export const INSPECTOR_DEFAULTS = {
  /** Events kept per actor (the "last events" list). */
  eventsPerActor: 20,
  /** System events kept for the timeline. */
  timelineSize: 500,
  /** Actor records kept; dead ones go first. */
  maxActors: 5000,
  /** Dead actors kept for a look after they end. */
  keepDead: 200,
  /** Changes are coalesced and sent at most this often. */
  flushMs: 100,
  /**
   * Tree frames (every actor's summary: the biggest frame) go out at most
   * this often; a runtime that spawns a promise actor per I/O call changes
   * the actor list constantly.
   */
  treeIntervalMs: 500,
  /** Unsent bytes on a viewer's socket above which it is skipped. */
  maxBufferedBytes: 1024 * 1024,
  /** Skipped flushes in a row before a slow viewer is dropped. */
  maxSkips: 600,
  /** Viewers at once; the next upgrade gets 503. */
  maxViewers: 16,
  /** Largest inbound frame (only `select` frames come in). */
  maxPayload: 4096,
} as const;

export type InspectorLimits = { -readonly [K in keyof typeof INSPECTOR_DEFAULTS]: number };

export interface InspectorOptions extends Partial<InspectorLimits> {
  clock?: HubClock;
  /** How deep and wide contexts and events are shown. */
  json?: Partial<SafeJsonLimits>;
  logger?: { warn(obj: object, msg: string): void };
}

export interface ResolvedInspectorOptions extends InspectorLimits {
  clock: HubClock;
  json: Partial<SafeJsonLimits>;
  logger: { warn(obj: object, msg: string): void };
}

/** A bad option, named. */
export class InspectorConfigError extends Error {
  override readonly name = 'InspectorConfigError';
  readonly code = 'INSPECTOR_CONFIG';
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(`invalid inspector option ${field}: ${problem}`);
  }
}

export const systemHubClock: HubClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (id) => clearTimeout(id as ReturnType<typeof setTimeout>),
};

const LIMIT_KEYS = Object.keys(INSPECTOR_DEFAULTS);
const KEYS = [...LIMIT_KEYS, 'clock', 'json', 'logger'];

/**
 * @example
 * ```ts
 * resolveInspectorOptions({}).flushMs // => 100
 * resolveInspectorOptions({ timelineSize: 50 }).timelineSize // => 50
 * resolveInspectorOptions({ flushMS: 5 }) // throws INSPECTOR_CONFIG
 * resolveInspectorOptions({ maxViewers: 0 }) // throws InspectorConfigError
 * resolveInspectorOptions({ treeIntervalMs: 0 }).treeIntervalMs // => 0
 * ```
 */
export function resolveInspectorOptions(options: InspectorOptions): ResolvedInspectorOptions {
  for (const key of Object.keys(options)) {
    if (KEYS.includes(key)) continue;
    const guess = didYouMean(key, KEYS);
    throw new InspectorConfigError(key, guess ? `unknown, did you mean "${guess}"?` : 'unknown');
  }
  const limits = { ...INSPECTOR_DEFAULTS } as InspectorLimits;
  for (const key of LIMIT_KEYS as (keyof InspectorLimits)[]) {
    const v = options[key];
    if (v === undefined) continue;
    // Only the tree interval may be 0 (a tree frame with every flush).
    const min = key === 'treeIntervalMs' ? 0 : 1;
    if (!(Number.isInteger(v) && v >= min)) {
      throw new InspectorConfigError(key, `must be an integer >= ${min}`);
    }
    limits[key] = v;
  }
  return {
    ...limits,
    clock: options.clock ?? systemHubClock,
    json: options.json ?? {},
    logger: options.logger ?? pino({ name: 'inspector' }),
  };
}
