/**
 * The field and message of a failed schema parse, for errors that name one
 * field the same way in every layer. Structural over zod's error (this layer
 * imports no package), so any `{ issues }` fits.
 */

/** What an issue needs to be described: where it is and what is wrong. */
export interface SchemaIssue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

/**
 * The first issue's dotted path (or `whole` when the issue is about the
 * value as a whole) and its message. zod fails a parse only with at least
 * one issue; an empty list reads as `whole: invalid`.
 *
 * @example
 * ```ts
 * firstIssue({ issues: [{ path: ['limits', 'maxPayload'], message: 'too small' }] }, 'options') // => { field: 'limits.maxPayload', message: 'too small' }
 * firstIssue({ issues: [{ path: [], message: 'expected object' }] }, 'body') // => { field: 'body', message: 'expected object' }
 * firstIssue({ issues: [] }, 'query') // => { field: 'query', message: 'invalid' }
 * ```
 */
export function firstIssue(
  error: { readonly issues: readonly SchemaIssue[] },
  whole: string,
): { field: string; message: string } {
  const issue = error.issues[0];
  if (issue === undefined) return { field: whole, message: 'invalid' };
  return { field: issue.path.map(String).join('.') || whole, message: issue.message };
}
