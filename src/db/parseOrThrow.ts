/**
 * One bridge from zod to the store's typed errors, so every validation
 * failure names its field the same way.
 */
import type { z } from 'zod';
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
  const issue = result.error.issues[0];
  const path = issue?.path.map(String) ?? [];
  // An unknown key is named itself, so `{ sesionId }` reports `sesionId`.
  if (issue?.code === 'unrecognized_keys' && issue.keys[0] !== undefined) path.push(issue.keys[0]);
  const field = [prefix, ...path].filter((p) => p !== '').join('.');
  throw new ValidationError(field, issue?.message ?? 'invalid');
}
