/**
 * The field and message of a failed schema parse, for errors that name one
 * field the same way in every layer. Structural over zod's error (this layer
 * imports no package), so any `{ issues }` fits.
 */

/** What an issue needs to be described: where it is and what is wrong. */
export interface SchemaIssue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
  /** zod's issue code: `unrecognized_keys` and `invalid_key` are read further. */
  readonly code?: string;
  /** The unknown keys of an `unrecognized_keys` issue. */
  readonly keys?: readonly string[];
  /** The key schema's own issues of an `invalid_key` issue. */
  readonly issues?: readonly SchemaIssue[];
}

/**
 * The first issue's dotted path (or `whole` when the issue is about the
 * value as a whole) and its message. zod fails a parse only with at least
 * one issue; an empty list reads as `whole: invalid`. An unknown key is
 * named itself, and a refused record key gives its own schema's message
 * (`environment variable name`), not zod's `Invalid key in record`. An
 * empty key adds nothing to the path.
 *
 * @example
 * ```ts
 * firstIssue({ issues: [{ path: ['limits', 'maxPayload'], message: 'too small' }] }, 'options') // => { field: 'limits.maxPayload', message: 'too small' }
 * firstIssue({ issues: [{ path: [], message: 'expected object' }] }, 'body') // => { field: 'body', message: 'expected object' }
 * firstIssue({ issues: [] }, 'query') // => { field: 'query', message: 'invalid' }
 * firstIssue({ issues: [{ code: 'unrecognized_keys', keys: ['userId'], path: [], message: 'Unrecognized key: "userId"' }] }, 'body') // => { field: 'userId', message: 'Unrecognized key: "userId"' }
 * firstIssue({ issues: [{ code: 'invalid_key', path: ['env', '1A'], message: 'Invalid key in record', issues: [{ path: [], message: 'environment variable name' }] }] }, 'body') // => { field: 'env.1A', message: 'environment variable name' }
 * firstIssue({ issues: [{ path: ['env', ''], message: 'environment variable name' }] }, 'body') // => { field: 'env', message: 'environment variable name' }
 * ```
 */
export function firstIssue(
  error: { readonly issues: readonly SchemaIssue[] },
  whole: string,
): { field: string; message: string } {
  const issue = error.issues[0];
  if (issue === undefined) return { field: whole, message: 'invalid' };
  const path = issue.path.map(String);
  const unknown = issue.code === 'unrecognized_keys' ? issue.keys?.[0] : undefined;
  if (unknown !== undefined) path.push(unknown);
  const inner = issue.code === 'invalid_key' ? issue.issues?.[0]?.message : undefined;
  return {
    field: path.filter((p) => p !== '').join('.') || whole,
    message: inner ?? issue.message,
  };
}
