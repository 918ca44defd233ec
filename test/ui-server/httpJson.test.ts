/**
 * JSON in and out: a body past the limit is refused without reading on, a
 * body that is not JSON or not the schema's is a 400 naming the field, and
 * a reply carries its status, type and no-store. httpApi.test.ts checks the
 * same answers through a server.
 */
import type { ServerResponse } from 'node:http';
import { expect, test } from 'vitest';
import { z } from 'zod';
import { readJson, send } from '../../src/ui-server/httpJson.js';
import { UiRequestError } from '../../src/ui-server/listenerGuard.js';

const schema = z.strictObject({ title: z.string().min(1) });

async function* chunks(...parts: string[]): AsyncGenerator<Buffer> {
  for (const p of parts) yield Buffer.from(p);
}

const failure = (work: Promise<unknown>) =>
  work.then(
    () => {
      throw new Error('resolved');
    },
    (error: unknown) => {
      expect(error).toBeInstanceOf(UiRequestError);
      const e = error as UiRequestError;
      return { status: e.status, code: e.code, message: e.message };
    },
  );

test('a body in chunks under the limit, checked by the schema', async () => {
  await expect(readJson(chunks('{"ti', 'tle":"a"}'), 100, schema)).resolves.toEqual({ title: 'a' });
});

test('a body past the limit: 413, and the stream is read no further', async () => {
  let read = 0;
  async function* big(): AsyncGenerator<Buffer> {
    for (let i = 0; i < 10; i++) {
      read += 1;
      yield Buffer.alloc(60, 'x');
    }
  }
  expect(await failure(readJson(big(), 100, schema))).toEqual({
    status: 413,
    code: 'payload_too_large',
    message: 'body over 100 bytes',
  });
  expect(read).toBe(2);
});

test('not JSON, or not the schema: 400 saying which', async () => {
  expect(await failure(readJson(chunks('{'), 100, schema))).toMatchObject({
    status: 400,
    code: 'bad_json',
  });
  expect(await failure(readJson(chunks('{"title":""}'), 100, schema))).toMatchObject({
    status: 400,
    code: 'bad_request',
    message: expect.stringMatching(/^title: /),
  });
  expect(await failure(readJson(chunks('{"title":"a","x":1}'), 100, schema))).toMatchObject({
    status: 400,
    code: 'bad_request',
  });
});

test('send: JSON with its type and no-store; no body, no type; headers added', () => {
  const written: Array<{ status: number; headers: Record<string, string>; body: string }> = [];
  const res = (): ServerResponse => {
    const r = { status: 0, headers: {} as Record<string, string>, body: '' };
    written.push(r);
    return {
      writeHead(status: number, headers: Record<string, string>) {
        r.status = status;
        r.headers = headers;
      },
      end(body: string) {
        r.body = body;
      },
    } as unknown as ServerResponse;
  };
  send(res(), 201, { a: 1 }, { 'x-y': 'z' });
  send(res(), 204, undefined);
  expect(written).toEqual([
    {
      status: 201,
      headers: {
        'content-type': 'application/json; charset=utf-8',
        'cache-control': 'no-store',
        'x-y': 'z',
      },
      body: '{"a":1}',
    },
    { status: 204, headers: { 'cache-control': 'no-store' }, body: '' },
  ]);
});
