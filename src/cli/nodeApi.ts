/**
 * Talking to a running node over its HTTP API, for `enqueue` and `status`
 * when that node holds the PGlite directory (a second process must not open
 * it). Every request has a deadline; an error reply keeps its code.
 */
import { CliError } from './exitCodes.js';

const REQUEST_MS = 10_000;

/** One JSON request with a bearer token. Rejects with `CLI_REMOTE` naming the node's error code. */
export async function nodeRequest<T>(
  baseUrl: string,
  token: string,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<T> {
  let res: Response;
  try {
    res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(REQUEST_MS),
    });
  } catch (error) {
    throw new CliError(
      'CLI_REMOTE',
      `the node at ${baseUrl} did not answer: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  const text = await res.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch (error) {
    throw new CliError('CLI_REMOTE', `the node answered ${res.status} with non-JSON`, {
      cause: error,
    });
  }
  if (!res.ok) {
    const e = (json as { error?: { code?: string; message?: string } } | undefined)?.error;
    // A 400 (malformed) or 422 (`invalid`) is the input the user typed, refused:
    // a usage error (exit 2), as the rows path says.
    throw new CliError(
      res.status === 400 || res.status === 422 ? 'CLI_USAGE' : 'CLI_REMOTE',
      `the node refused: ${res.status} ${e?.code ?? ''} ${e?.message ?? ''}`.trim(),
    );
  }
  return json as T;
}
