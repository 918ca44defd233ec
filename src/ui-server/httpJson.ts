/**
 * JSON in and out of the HTTP API (src/ui-server/httpApi.ts): a body read
 * under a size limit and checked by a zod schema, and a reply. A refusal is
 * a `UiRequestError` (src/ui-server/listenerGuard.ts), which the API
 * reports as `{ error: { code, message } }` with its status.
 */
import type { ServerResponse } from 'node:http';
import type { z } from 'zod';
import { firstIssue } from '../common/firstIssue.js';
import { UiRequestError } from './listenerGuard.js';

/** A reply with `body` as JSON (none when undefined), never cached. */
export function send(res: ServerResponse, status: number, body: unknown, headers = {}): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, {
    ...(body === undefined ? {} : { 'content-type': 'application/json; charset=utf-8' }),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}

/**
 * The request's body as JSON checked by `schema`: a 413 past `limit` bytes
 * (read no further), a 400 `bad_json` or `bad_request` naming the field.
 * `req` is the `IncomingMessage`, or any stream of its chunks.
 */
export async function readJson<T>(
  req: AsyncIterable<unknown>,
  limit: number,
  schema: z.ZodType<T>,
): Promise<T> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit)
      throw new UiRequestError(413, 'payload_too_large', `body over ${limit} bytes`);
    chunks.push(chunk as Buffer);
  }
  let value: unknown;
  try {
    value = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (err) {
    throw new UiRequestError(400, 'bad_json', `body is not JSON: ${(err as Error).message}`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const { field, message } = firstIssue(parsed.error, 'body');
    throw new UiRequestError(400, 'bad_request', `${field}: ${message}`);
  }
  return parsed.data;
}
