/**
 * `POST /inspect/api/exit` end to end: a real http server, a supervised
 * workload, every guard of the ladder, and an exit the supervisor restarts.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AnyActorRef } from 'xstate';
import * as mod from '../../../src/ui-server/inspector/inspectorExitApi.js';
import { INSPECT_EXIT_PATH } from '../../../src/ui-server/inspector/inspectorProtocol.js';
import {
  type InspectorServer,
  startInspectorServer,
} from '../../../src/ui-server/inspector/startInspectorServer.js';
import { runDocExamples } from '../../support/docExamples.js';
import { job, startWorkload, type Workload } from './fixtures.js';

runDocExamples(
  new URL('../../../src/ui-server/inspector/inspectorExitApi.ts', import.meta.url),
  mod,
);

const ADMIN = 'admin-token-0123456789';
const USER = 'alice-token-0123456789';

let w: Workload;
let server: InspectorServer;

beforeEach(async () => {
  w = await startWorkload({ flushMs: 100 });
  server = await startInspectorServer({
    inspector: w.inspector,
    tokens: { admin: ADMIN, users: { alice: USER } },
    port: 0,
    host: '127.0.0.1',
  });
});

afterEach(async () => {
  await server.close();
  await w.root.shutdown();
});

async function exit(
  body: unknown,
  token: string | null = ADMIN,
  method = 'POST',
): Promise<{ status: number; body: { error?: { code: string }; reason?: string } }> {
  const res = await fetch(`${server.url}${INSPECT_EXIT_PATH}`, {
    method,
    headers: {
      'content-type': 'application/json',
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
    },
    ...(method === 'POST' ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as never };
}

const restarts = (id: string) => w.root.whichChildren().find((c) => c.id === id)?.restartCount;

describe('inspector exit API', () => {
  it('kills a child by its sessionId; the supervisor restarts it and the tree shows it', async () => {
    const before = w.root.child('job-1') as AnyActorRef;
    const r = await exit({ sessionId: before.sessionId });
    expect(r).toEqual({
      status: 200,
      body: { ok: true, supervisor: 'root', childId: 'job-1', reason: 'killed' },
    });
    expect(before.getSnapshot().status).toBe('stopped');
    expect(restarts('job-1')).toBe(1);
    const node = Object.values(w.inspector.collector.tree.supervisors)
      .find((s) => s.id === 'root')!
      .children.find((c) => c.id === 'job-1')!;
    expect(node).toMatchObject({ restartCount: 1, status: 'running' });
    expect(node.exits.at(-1)?.reason).toBe('killed');
  });

  it('exits by path (supervisor id or sessionId / child), a nested child too, with each reason', async () => {
    expect((await exit({ path: 'root/job-2', reason: { shutdown: 'ops' } })).body.reason).toBe(
      'shutdown: ops',
    );
    expect(restarts('job-2')).toBe(1);
    const nested = w.root.childSupervisor('nested') as { sessionId: string };
    const r = await exit({ path: `${nested.sessionId}/deep`, reason: { error: 'injected' } });
    expect(r.status).toBe(200);
    expect(r.body.reason).toBe('error: injected');
    expect((await exit({ path: 'root/job-1', reason: 'normal' })).status).toBe(200);
  });

  it('refuses without a token (401), with a user token (403), and other methods (405)', async () => {
    expect((await exit({ path: 'root/job-1' }, null)).status).toBe(401);
    expect((await exit({ path: 'root/job-1' }, 'wrong-token-000000000')).status).toBe(401);
    const user = await exit({ path: 'root/job-1' }, USER);
    expect(user).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });
    expect((await exit(null, ADMIN, 'GET')).status).toBe(405);
    expect(restarts('job-1')).toBe(0);
  });

  it('rejects bad bodies with typed errors (400, 413)', async () => {
    expect((await exit('{nope')).body.error?.code).toBe('bad_json');
    expect((await exit({})).body.error?.code).toBe('bad_request');
    expect((await exit({ sessionId: 'x:1', path: 'root/job-1' })).status).toBe(400);
    expect((await exit({ path: 'root/job-1', reason: 'explode' })).status).toBe(400);
    expect((await exit({ path: 'root/job-1', extra: 1 })).status).toBe(400);
    expect((await exit({ path: 'rootjob' })).status).toBe(400);
    expect((await exit({ path: `root/${'x'.repeat(5000)}` })).status).toBe(413);
    expect(restarts('job-1')).toBe(0);
  });

  it('answers 404 for unknown actors and 409 for a child that is not running', async () => {
    expect((await exit({ sessionId: 'x:99999' })).body.error?.code).toBe('not_found');
    expect((await exit({ path: 'nobody/job-1' })).status).toBe(404);
    expect((await exit({ path: 'root/nope' })).status).toBe(404);
    // A transient child exited normally stays stopped: exiting it again is a conflict.
    await w.root.startChild({
      id: 'once',
      start: { logic: job },
      restart: 'transient',
    });
    expect((await exit({ path: 'root/once', reason: 'normal' })).status).toBe(200);
    expect(w.root.whichChildren().find((c) => c.id === 'once')?.status).toBe('stopped');
    const again = await exit({ path: 'root/once' });
    expect(again).toMatchObject({ status: 409, body: { error: { code: 'not_running' } } });
  });
});
