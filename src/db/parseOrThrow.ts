/**
 * One bridge from zod to the store's typed errors, so every validation
 * failure names its field the same way.
 */
import type { z } from 'zod';
import { firstIssue } from '../common/firstIssue.js';
import { ValidationError } from './errors.js';

/**
 * Parses `value` with `schema`; on failure throws a `ValidationError` whose
 * `field` is `prefix` joined with the path of the first issue.
 */
export function parseOrThrow<S extends z.ZodType>(
  schema: S,
  value: unknown,
  prefix: string,
): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  // An unknown key is named itself, so `{ sesionId }` reports `sesionId`.
  const { field, message } = firstIssue(result.error, '');
  throw new ValidationError([prefix, field].filter((p) => p !== '').join('.'), message);
}
