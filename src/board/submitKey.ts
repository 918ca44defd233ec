import { z } from 'zod';

/**
 * A submission's idempotency key (`CreateTaskInput.key`, the HTTP
 * `Idempotency-Key` header): what a caller may send, checked at every
 * boundary that takes one and once more by the tick's op schema. The
 * database's CHECK on `tasks.submit_key` (migration 23) says the same.
 *
 * @example
 * ```ts
 * submitKey.safeParse('order-4711/attempt').success // => true
 * submitKey.safeParse('8d1f2c3e-5b6a-4c7d-9e0f-a1b2c3d4e5f6').success // => true
 * submitKey.safeParse('two words').success // => false
 * submitKey.safeParse('').success // => false
 * submitKey.safeParse('x'.repeat(256)).success // => false
 * ```
 */
export const submitKey = z
  .string()
  .regex(/^[\x21-\x7e]{1,255}$/, '1-255 visible ASCII characters (no spaces)');
