/**
 * The inspector topic end to end: a real http + ws server, a supervised
 * workload, and a raw client. Time moves only on the simulated clock.
 */
import { request } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BEARER_SUBPROTOCOL_PREFIX as BOARD_PREFIX } from '../../../src/board/boardProtocol.js';
import { BEARER_SUBPROTOCOL_PREFIX } from '../../../src/ui-server/inspector/inspectorProtocol.js';
import {
  type InspectorServer,
  startInspectorServer,
} from '../../../src/ui-server/inspector/startInspectorServer.js';
import { startWorkload, type Workload } from './fixtures.js';
import { InspectClient } from './inspectClient.js';

const ADMIN = 'admin-token-0123456789';
const USER = 'alice-token-0123456789';

let w: Workload;
let server: InspectorServer;
const clients: InspectClient[] = [];

async function viewer(): Promise<InspectClient> {
  const c = await InspectClient.open(server.url, ADMIN);
  clients.push(c);
  return c;
}

const settle = async (rounds = 10) => {
  for (let i = 0; i < rounds; i++) await Promise.resolve();
};

beforeEach(async () => {
  w = await startWorkload({ flushMs: 100, treeIntervalMs: 100 });
  server = await startInspectorServer({
    inspector: w.inspector,
    tokens: { admin: ADMIN, users: { alice: USER } },
    port: 0,
    host: '127.0.0.1',
  });
});

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await server.close();
  await w.root.shutdown();
});

describe('inspector topic: who may watch', () => {
  it('refuses an upgrade without a token (401) and a user token (403)', async () => {
    expect(await InspectClient.refusal(server.url, {})).toBe(401);
    expect(
      await InspectClient.refusal(server.url, { authorization: 'Bearer nope-not-a-token-at-all' }),
    ).toBe(401);
    expect(await InspectClient.refusal(server.url, { authorization: `Bearer ${USER}` })).toBe(403);
    expect(w.inspector.stats().viewers).toBe(0);
  });

  it('refuses viewers beyond maxViewers with 503', async () => {
    const small = await startWorkload({ maxViewers: 1 });
    const s = await startInspectorServer({
      inspector: small.inspector,
      tokens: { admin: ADMIN },
      port: 0,
      host: '127.0.0.1',
    });
    try {
      const first = await InspectClient.open(s.url, ADMIN);
      await first.take('tree');
      expect(await InspectClient.refusal(s.url, { authorization: `Bearer ${ADMIN}` })).toBe(503);
      first.close();
    } finally {
      await s.close();
      await small.root.shutdown();
    }
  });

  it('answers 400 to a non-websocket upgrade and leaves other paths alone (404 here)', async () => {
    const status = (path: string, upgrade: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request(`${server.url}${path}`, {
          headers: { connection: 'Upgrade', upgrade, authorization: `Bearer ${ADMIN}` },
        });
        req.on('response', (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('upgrade', () => reject(new Error('upgraded')));
        req.on('error', reject);
        req.end();
      });
    expect(await status('/inspect/ws', 'h2c')).toBe(400);
    expect(await status('/ws', 'websocket')).toBe(404);
  });

  it('shares the board’s bearer subprotocol prefix', () => {
    expect(BEARER_SUBPROTOCOL_PREFIX).toBe(BOARD_PREFIX);
  });
});

describe('inspector topic: frames', () => {
  it('greets an admin with hello, then the tree as it is', async () => {
    const c = await viewer();
    const hello = await c.take('hello');
    expect(hello.protocol).toBe(1);
    expect(hello.limits.flushMs).toBe(100);
    const tree = await c.take('tree');
    expect(tree.roots).toEqual([w.root.sessionId]);
    const root = tree.tree.supervisors[w.root.sessionId]!;
    expect(root.children.map((ch) => `${ch.id}:${ch.status}:${ch.restartCount}`)).toEqual([
      'job-1:running:0',
      'job-2:running:0',
      'nested:running:0',
    ]);
    const job1 = tree.actors.find((a) => a.id === 'job-1')!;
    expect(job1).toMatchObject({ status: 'active', machine: true, supervisor: false });
    expect(tree.actors.find((a) => a.sessionId === w.root.sessionId)?.supervisor).toBe(true);
    // The start of every child is already on the timeline.
    const timeline = await c.take('timeline');
    expect(timeline.entries.filter((e) => e.kind === 'start').map((e) => e.subject)).toEqual(
      expect.arrayContaining(['root/job-1', 'root/job-2', 'root/nested']),
    );
  });

  it('sends a selected actor’s statechart, active states, context and last events', async () => {
    const c = await viewer();
    await c.take('tree');
    const ref = w.root.child('job-1') as { sessionId: string; send(e: unknown): void };
    c.send({ type: 'select', sessionId: ref.sessionId });
    const actor = await c.take('actor');
    expect(actor.graph?.nodes.map((n) => n.id)).toEqual(['job', 'job.idle', 'job.working']);
    expect(actor.graph?.edges.map((e) => `${e.source}->${e.target}:${e.label}`)).toEqual(
      expect.arrayContaining(['job.idle->job.working:START', 'job.working->job.idle:FINISH']),
    );
    expect(actor.active).toEqual(['job', 'job.idle']);
    expect(actor.context).toEqual({ runs: 0, note: null });
    const first = await c.take('events');
    expect(first.reset).toBe(true);
    expect(first.events.map((e) => e.type)).toEqual(['xstate.init']);

    ref.send({ type: 'START' });
    w.clock.increment(100);
    const next = await c.take('actor', (f) => f.active.includes('job.working'));
    expect(next.graph).toBeUndefined();
    expect(next.context).toEqual({ runs: 1, note: null });
    const delta = await c.take('events');
    expect(delta.reset).toBe(false);
    expect(delta.events.map((e) => e.type)).toEqual(['START']);
  });

  it('shows a crash: the exit reason, the restart count, the new incarnation, the timeline', async () => {
    const c = await viewer();
    const t0 = await c.take('tree');
    const before = t0.tree.supervisors[w.root.sessionId]!.children[0]!.sessionId;
    (w.root.child('job-1') as { send(e: unknown): void }).send({ type: 'CRASH' });
    await settle();
    w.clock.increment(100);
    const tree = await c.take(
      'tree',
      (f) => f.tree.supervisors[w.root.sessionId]!.children[0]!.restartCount === 1,
    );
    const child = tree.tree.supervisors[w.root.sessionId]!.children[0]!;
    expect(child.sessionId).not.toBe(before);
    expect(child.exits.map((e) => e.reason)).toEqual(['error: boom']);
    expect(tree.actors.find((a) => a.sessionId === before)?.status).toBe('error');
    const line = await c.take('timeline', (f) => f.entries.some((e) => e.kind === 'exit'));
    expect(line.entries.map((e) => `${e.kind}:${e.text}`)).toEqual([
      'exit:exited: error: boom',
      'restart:restarting',
      'start:restarted (restart #1)',
    ]);
    expect(line.entries[0]!.alarm).toBe(true);
  });

  it('says when the selected actor is gone, and answers bad frames without closing', async () => {
    const c = await viewer();
    await c.take('tree');
    c.send('not json');
    expect((await c.take('error')).code).toBe('bad_json');
    c.send({ type: 'select', sessionId: 42 });
    expect((await c.take('error')).code).toBe('bad_frame');
    c.send({ type: 'subscribe' });
    expect((await c.take('error')).code).toBe('bad_frame');
    c.send({ type: 'select', sessionId: 'x:9999' });
    expect(await c.take('gone')).toEqual({ type: 'gone', sessionId: 'x:9999' });
    expect(c.ws.readyState).toBe(c.ws.OPEN);
  });

  it('coalesces: many changes between flushes make one tree frame', async () => {
    const c = await viewer();
    await c.take('tree');
    await c.take('timeline');
    for (let i = 0; i < 5; i++) {
      (w.root.child('job-2') as { send(e: unknown): void }).send({ type: 'CRASH' });
      await settle();
    }
    w.clock.increment(100);
    const tree = await c.take('tree');
    expect(tree.tree.supervisors[w.root.sessionId]!.children[1]!.restartCount).toBe(5);
    expect(c.frames.filter((f) => f.type === 'tree')).toEqual([]);
    const line = await c.take('timeline');
    expect(line.entries.filter((e) => e.kind === 'exit')).toHaveLength(5);
    // Nothing else was pending: a second flush sends nothing new (the
    // `gone` answer is a barrier: anything sent before it would be queued).
    w.inspector.flush();
    c.send({ type: 'select', sessionId: 'x:none' });
    await c.take('gone');
    expect(c.frames).toEqual([]);
  });

  it('closes viewers with 1001 when the server closes', async () => {
    const c = await viewer();
    await c.take('tree');
    await server.close();
    expect((await c.closed).code).toBe(1001);
    expect(w.inspector.stats().viewers).toBe(0);
    expect(w.inspector.collector.changed).toBeNull();
  });
});

describe('inspector page routes', () => {
  it('serves /inspect and its script, and only with GET', async () => {
    const page = await fetch(`${server.url}/inspect`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(await page.text()).toContain('<script type="module" src="/inspect.js">');
    // Its page acts on the node (exits): no other site may frame it (clickjacking).
    for (const method of ['GET', 'HEAD']) {
      const r = await fetch(`${server.url}/inspect`, { method });
      expect(r.headers.get('content-security-policy'), method).toContain("frame-ancestors 'none'");
      expect(r.headers.get('x-frame-options'), method).toBe('DENY');
      await r.body?.cancel();
    }
    const js = await fetch(`${server.url}/inspect.js`);
    expect(js.headers.get('content-type')).toContain('javascript');
    const page1 = await js.text();
    expect(page1.length).toBeGreaterThan(1000);
    // ELK is a script of its own, loaded after the first paint: the page's stays small.
    expect(page1).not.toContain('org.eclipse.elk');
    expect(page1.length).toBeLessThan(200_000);
    const elk = await fetch(`${server.url}/inspect-elk.js`);
    expect(elk.headers.get('content-type')).toContain('javascript');
    expect(await elk.text()).toContain('org.eclipse.elk');
    expect((await fetch(`${server.url}/inspect`, { method: 'POST' })).status).toBe(405);
    expect((await fetch(`${server.url}/elsewhere`)).status).toBe(404);
  });

  it('answers a HEAD of each page route like its GET, without the body', async () => {
    for (const path of ['/inspect', '/inspect.js', '/inspect-elk.js']) {
      const get = await fetch(`${server.url}${path}`);
      await get.arrayBuffer();
      const head = await fetch(`${server.url}${path}`, { method: 'HEAD' });
      expect(head.status, path).toBe(200);
      expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
      expect(await head.text()).toBe('');
    }
    const post = await fetch(`${server.url}/inspect`, { method: 'POST' });
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });
});
