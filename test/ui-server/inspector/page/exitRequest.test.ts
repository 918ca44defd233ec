import { describe, expect, it } from 'vitest';
import { INSPECT_EXIT_PATH } from '../../../../src/ui-server/inspector/inspectorProtocol.js';
import * as mod from '../../../../src/ui-server/inspector/page/exitRequest.js';
import { runDocExamples } from '../../../support/docExamples.js';

runDocExamples(
  new URL('../../../../src/ui-server/inspector/page/exitRequest.ts', import.meta.url),
  mod,
);

/** A fetch that answers `status` with `body` and keeps what it was asked. */
function fakeFetch(status: number, body: unknown) {
  const calls: Array<{ url: string; init: RequestInit }> = [];
  const fn = (async (url: string, init: RequestInit) => {
    calls.push({ url, init });
    return new Response(JSON.stringify(body), { status });
  }) as unknown as typeof fetch;
  return { fn, calls };
}

describe('requestExit', () => {
  it('posts the path and the reason with the bearer token, and resolves with the reason', async () => {
    const f = fakeFetch(200, { reason: 'killed' });
    await expect(mod.requestExit('adm', 'x:1/job-1', 'error', f.fn)).resolves.toBe('killed');
    const [call] = f.calls;
    expect(call?.url).toBe(INSPECT_EXIT_PATH);
    expect(call?.init.method).toBe('POST');
    expect(call?.init.headers).toEqual({
      authorization: 'Bearer adm',
      'content-type': 'application/json',
    });
    expect(JSON.parse(String(call?.init.body))).toEqual({
      path: 'x:1/job-1',
      reason: { error: 'exited from the inspector' },
    });
  });

  it("rejects with the API's code and message", async () => {
    const f = fakeFetch(409, { error: { code: 'not_running', message: 'job-1 is not running' } });
    await expect(mod.requestExit('adm', 'x:1/job-1', 'kill', f.fn)).rejects.toThrow(
      'not_running: job-1 is not running',
    );
  });

  it('rejects with the status when the answer names no error', async () => {
    const f = fakeFetch(502, {});
    await expect(mod.requestExit('adm', 'x:1/job-1', 'kill', f.fn)).rejects.toThrow('502: ');
  });
});
