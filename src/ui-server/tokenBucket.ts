/**
 * A token bucket, as a pure value: the flood limit of one WebSocket
 * connection, and the subscribe budget of one user over all their sockets.
 * The caller reads the clock and passes `now` in (milliseconds).
 */

/** Bucket state: tokens left and when they were last counted. */
export interface TokenBucket {
  tokens: number;
  at: number;
}

/** Capacity (the burst a client may send at once) and steady refill rate. */
export interface BucketLimits {
  burst: number;
  perSecond: number;
}

/**
 * A full bucket at `now`.
 *
 * @example
 * ```ts
 * fullBucket({ burst: 5, perSecond: 1 }, 1000) // => { tokens: 5, at: 1000 }
 * ```
 */
export function fullBucket(limits: BucketLimits, now: number): TokenBucket {
  return { tokens: limits.burst, at: now };
}

/**
 * Refills for the time since the last take, then takes one token if there is
 * one. A clock that went backwards refills nothing.
 *
 * @example
 * ```ts
 * take({ tokens: 1, at: 0 }, { burst: 5, perSecond: 1 }, 0) // => { allowed: true, bucket: { tokens: 0, at: 0 } }
 * take({ tokens: 0, at: 0 }, { burst: 5, perSecond: 1 }, 500) // => { allowed: false, bucket: { tokens: 0.5, at: 500 } }
 * take({ tokens: 0, at: 0 }, { burst: 5, perSecond: 1 }, 1000) // => { allowed: true, bucket: { tokens: 0, at: 1000 } }
 * take({ tokens: 4, at: 0 }, { burst: 5, perSecond: 1 }, 60000) // => { allowed: true, bucket: { tokens: 4, at: 60000 } }
 * take({ tokens: 0, at: 1000 }, { burst: 5, perSecond: 1 }, 0) // => { allowed: false, bucket: { tokens: 0, at: 0 } }
 * ```
 */
export function take(
  bucket: TokenBucket,
  limits: BucketLimits,
  now: number,
): { allowed: boolean; bucket: TokenBucket } {
  const elapsed = Math.max(0, now - bucket.at);
  const tokens = Math.min(limits.burst, bucket.tokens + (elapsed / 1000) * limits.perSecond);
  if (tokens >= 1) return { allowed: true, bucket: { tokens: tokens - 1, at: now } };
  return { allowed: false, bucket: { tokens, at: now } };
}

/**
 * Milliseconds until `take` would allow one, at least 1 (a caller arms a
 * timer with it; 0 would spin). 1 when a token is there already.
 *
 * @example
 * ```ts
 * msUntilToken({ tokens: 0, at: 0 }, { burst: 5, perSecond: 2 }, 0) // => 500
 * msUntilToken({ tokens: 0.5, at: 0 }, { burst: 5, perSecond: 2 }, 0) // => 250
 * msUntilToken({ tokens: 3, at: 0 }, { burst: 5, perSecond: 2 }, 0) // => 1
 * ```
 */
export function msUntilToken(bucket: TokenBucket, limits: BucketLimits, now: number): number {
  const elapsed = Math.max(0, now - bucket.at);
  const tokens = Math.min(limits.burst, bucket.tokens + (elapsed / 1000) * limits.perSecond);
  if (tokens >= 1) return 1;
  return Math.max(1, Math.ceil(((1 - tokens) / limits.perSecond) * 1000));
}
