/**
 * Talking to a running node over its HTTP API, for the commands that go
 * through the node holding the data directory (src/cli/commandRoute.ts: a
 * second process must not open a PGlite directory). Every request has a
 * deadline; an error reply keeps its code.
 */
import { CliError, type CliErrorCode } from './exitCodes.js';

const REQUEST_MS = 10_000;

/**
 * The CLI's code for a node's refusal, so that a command answers the same
 * through a node as from the rows: a 400 (malformed) or 422 (`invalid`) is
 * the input the user typed (exit 2), a 404 a task that does not exist (7), a
 * 409 a task in another state (8); anything else the node's failure (1).
 *
 * @example
 * ```ts
 * refusalCode(422) // => 'CLI_USAGE'
 * refusalCode(404) // => 'CLI_NOT_FOUND'
 * refusalCode(409) // => 'CLI_CONFLICT'
 * refusalCode(503) // => 'CLI_REMOTE'
 * ```
 */
export function refusalCode(status: number): CliErrorCode {
  if (status === 400 || status === 422) return 'CLI_USAGE';
  if (status === 404) return 'CLI_NOT_FOUND';
  if (status === 409) return 'CLI_CONFLICT';
  return 'CLI_REMOTE';
}

/** One JSON request with a bearer token. Rejects with `CLI_REMOTE` naming the node's error code. */
export async function nodeRequest<T>(
  baseUrl: string,
  token: string,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<T> {
  let res: Response;
  try {
    res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
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
  if (!res.ok) throw refusal(res.status, json);
  return json as T;
}

/** A node's `{ error }` reply as the CLI's error. */
function refusal(status: number, json: unknown): CliError {
  const e = (json as { error?: { code?: string; message?: string } } | undefined)?.error;
  return new CliError(
    refusalCode(status),
    `the node refused: ${status} ${e?.code ?? ''} ${e?.message ?? ''}`.trim(),
  );
}

/**
 * Longest a whole-file read (`nodeBytes`) may take: up to 16 MiB of stored
 * output, read in full before any of it is written, so a slow reader of our
 * stdout (a pager) never counts against it.
 */
const DOWNLOAD_MS = 60_000;

/**
 * One GET of a file the node sends as bytes (an output's `output.txt`), read
 * whole within `DOWNLOAD_MS`: the bytes as sent, never decoded; null on a 404
 * (no such file). Any other refusal is thrown as `nodeRequest` throws it.
 */
export async function nodeBytes(
  baseUrl: string,
  token: string,
  path: string,
): Promise<Uint8Array | null> {
  const signal = AbortSignal.timeout(DOWNLOAD_MS);
  try {
    const res = await fetch(`${baseUrl}${path}`, {
      headers: { authorization: `Bearer ${token}` },
      signal,
    });
    if (res.status === 404) {
      await res.body?.cancel();
      return null;
    }
    if (!res.ok) {
      const text = await res.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      throw refusal(res.status, json);
    }
    return new Uint8Array(await res.arrayBuffer());
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError(
      'CLI_REMOTE',
      `the node at ${baseUrl} did not answer: ${(error as Error).message}`,
      { cause: error },
    );
  }
}
