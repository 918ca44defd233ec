/**
 * The pool's caps: one validated defaults object, and the two pure questions
 * every dispatch asks ("what is this user's cap", "may this user start one
 * more"). Caps control concurrency, never admission: nothing here refuses an
 * enqueue.
 */

/** A cap value that is not a non-negative integer, or an unknown option. */
export class PoolCapError extends Error {
  override readonly name = 'PoolCapError';
  readonly code = 'POOL_INVALID_CAP';
  constructor(
    readonly field: string,
    readonly value: unknown,
    detail = 'must be an integer >= 0',
  ) {
    super(`pool caps: ${field} ${detail}, got ${String(value)}`);
  }
}

/** The caps the pool enforces. */
export interface PoolCaps {
  /** Most sessions running at once over all users. */
  readonly globalMax: number;
  /** A user's cap when they have no override. */
  readonly perUserMax: number;
  /** Per-user overrides (`user_caps` rows). `0` pauses a user: their work stays queued. */
  readonly overrides: ReadonlyMap<string, number>;
}

/** The defaults: 20 at once in total, 2 per user. */
export const DEFAULT_POOL_CAPS: PoolCaps = Object.freeze({
  globalMax: 20,
  perUserMax: 2,
  overrides: new Map<string, number>(),
});

const KNOWN = ['globalMax', 'perUserMax', 'overrides'] as const;

/**
 * Checks one cap value.
 *
 * @example
 * ```ts
 * checkCap('globalMax', 3) // => 3
 * checkCap('globalMax', 0) // => 0
 * checkCap('perUserMax', 1.5) // throws POOL_INVALID_CAP
 * checkCap('perUserMax', -1) // throws PoolCapError
 * ```
 */
export function checkCap(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new PoolCapError(field, value);
  }
  return value;
}

/**
 * Spreads options over the defaults; rejects unknown keys (naming the
 * closest known one) and bad values.
 *
 * @example
 * ```ts
 * resolvePoolCaps({ globalMax: 5 }).globalMax // => 5
 * resolvePoolCaps({}).perUserMax // => 2
 * resolvePoolCaps({ overrides: new Map([['ann', 4]]) }).overrides.get('ann') // => 4
 * resolvePoolCaps({ perUserMaxx: 3 }) // throws POOL_INVALID_CAP
 * ```
 */
export function resolvePoolCaps(
  options: Partial<PoolCaps> & Record<string, unknown> = {},
): PoolCaps {
  for (const key of Object.keys(options)) {
    if (!(KNOWN as readonly string[]).includes(key)) {
      const guess = KNOWN.find((k) => k.toLowerCase().startsWith(key.toLowerCase().slice(0, 4)));
      throw new PoolCapError(
        key,
        options[key],
        guess === undefined ? 'is not an option' : `is not an option (did you mean ${guess}?)`,
      );
    }
  }
  const overrides = new Map<string, number>();
  for (const [user, cap] of options.overrides ?? []) {
    overrides.set(user, checkCap(`overrides.${user}`, cap));
  }
  return {
    globalMax: checkCap('globalMax', options.globalMax ?? DEFAULT_POOL_CAPS.globalMax),
    perUserMax: checkCap('perUserMax', options.perUserMax ?? DEFAULT_POOL_CAPS.perUserMax),
    overrides,
  };
}

/**
 * A user's effective cap: their override, else the default.
 *
 * @example
 * ```ts
 * const caps = resolvePoolCaps({ overrides: new Map([['ann', 5], ['bob', 0]]) });
 * userCap(caps, 'ann') // => 5
 * userCap(caps, 'bob') // => 0
 * userCap(caps, 'cyd') // => 2
 * ```
 */
export function userCap(caps: PoolCaps, userId: string): number {
  return caps.overrides.get(userId) ?? caps.perUserMax;
}

/**
 * May a user start one more session now? Both caps must leave room. A user
 * over their cap (it was lowered while they ran) simply gets nothing new.
 *
 * @example
 * ```ts
 * const caps = resolvePoolCaps({ globalMax: 3 });
 * mayStart(caps, 'ann', 1, 2) // => true
 * mayStart(caps, 'ann', 2, 2) // => false
 * mayStart(caps, 'ann', 0, 3) // => false
 * mayStart(caps, 'ann', 3, 1) // => false
 * ```
 */
export function mayStart(
  caps: PoolCaps,
  userId: string,
  userRunning: number,
  totalRunning: number,
): boolean {
  return totalRunning < caps.globalMax && userRunning < userCap(caps, userId);
}
