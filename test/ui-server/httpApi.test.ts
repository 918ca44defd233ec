import { afterEach, describe, expect, it } from 'vitest';
import { rawExchange } from './hostileInput.js';
import { ADMIN, ALICE, BOB, type Harness, spec, startHarness } from './wsHarness.js';

let h: Harness;
afterEach(async () => {
  await h?.server.close();
});

async function call(
  method: string,
  path: string,
  token: string | null,
  body?: unknown,
  extra: Record<string, string> = {},
) {
  const res = await fetch(`${h.server.url}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...extra,
    },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json, headers: res.headers };
}
const errorCode = (r: { json: unknown }) => (r.json as { error: { code: string } }).error.code;

describe('tasks', () => {
  it('creates a task for the token’s user and returns its position in line', async () => {
    h = await startHarness();
    const created = [];
    for (let i = 0; i < 3; i++)
      created.push(await call('POST', '/api/tasks', ALICE, spec(`t${i}`)));
    expect(created.map((r) => r.status)).toEqual([201, 201, 201]);
    expect(created.map((r) => (r.json as { position: number }).position)).toEqual([0, 0, 1]);
    expect(h.board.get('t3').userId).toBe('alice');
  });

  it('an Idempotency-Key names one task of its user: 201, then 200 with the same task', async () => {
    h = await startHarness();
    const key = { 'idempotency-key': 'order-4711' };
    const first = await call('POST', '/api/tasks', ALICE, spec('once'), key);
    const again = await call('POST', '/api/tasks', ALICE, spec('once'), key);
    expect([first.status, again.status]).toEqual([201, 200]);
    expect(first.json).toMatchObject({ replayed: false });
    expect(again.json).toEqual({ ...(first.json as object), replayed: true });
    const changed = await call('POST', '/api/tasks', ALICE, spec('other title'), key);
    expect([changed.status, errorCode(changed)]).toEqual([409, 'conflict']);
    const bob = await call('POST', '/api/tasks', BOB, spec('once'), key);
    expect(bob.status).toBe(201);
    for (const bad of ['two words', 'x'.repeat(256), 'naïve']) {
      const r = await call('POST', '/api/tasks', ALICE, spec('x'), { 'idempotency-key': bad });
      expect([r.status, errorCode(r)], bad).toEqual([400, 'bad_request']);
    }
    expect(h.board.calls.filter((c) => c.op === 'createTask').length).toBe(4);
    const metrics = (await call('GET', '/metrics', ADMIN)).json as string;
    for (const line of [
      'roundtable_submissions_total{outcome="queued"} 2',
      'roundtable_submissions_total{outcome="replayed"} 1',
      'roundtable_submissions_total{outcome="conflict"} 1',
    ])
      expect(metrics).toContain(line);
  });

  it('rejects bad bodies with the failing field', async () => {
    h = await startHarness();
    const noCommand = await call('POST', '/api/tasks', ALICE, {
      title: 'x',
      image: 'a',
      command: [],
    });
    expect(noCommand.status).toBe(400);
    expect(errorCode(noCommand)).toBe('bad_request');
    expect((noCommand.json as { error: { message: string } }).error.message).toMatch(/^command/);
    const extra = await call('POST', '/api/tasks', ALICE, { ...spec('x'), userId: 'bob' });
    expect(errorCode(extra)).toBe('bad_request');
    const notJson = await call('POST', '/api/tasks', ALICE, '{oops');
    expect([notJson.status, errorCode(notJson)]).toEqual([400, 'bad_json']);
    // The runtime's rules for a run spec, here: a 400 naming the field as sent.
    for (const [body, message] of [
      [
        { ...spec('x'), env: { '1A': 'b' } },
        'env.1A: not an environment variable name ([A-Za-z_][A-Za-z0-9_]*)',
      ],
      [
        { ...spec('x'), env: { A: '\ud800' } },
        'env.A: lone UTF-16 surrogate: not well-formed Unicode',
      ],
      [{ ...spec('x'), command: ['echo', 'nul\0'] }, 'command.1: NUL byte in argument'],
      [
        { ...spec('x'), image: 'alpine; rm -rf /' },
        'image: image reference: no spaces or shell characters',
      ],
      [{ ...spec('x'), title: 'tab\there' }, 'title: control character'],
    ] as const) {
      const r = await call('POST', '/api/tasks', ALICE, body);
      expect([
        r.status,
        errorCode(r),
        (r.json as { error: { message: string } }).error.message,
      ]).toEqual([400, 'bad_request', message]);
    }
    // A title is trimmed, as before.
    expect((await call('POST', '/api/tasks', ALICE, { ...spec('x'), title: '  y  ' })).status).toBe(
      201,
    );
    expect(h.board.calls.at(-1)?.args[0]).toMatchObject({ title: 'y' });
  });

  it('a time limit in the body reaches the command; one out of bounds is a 400 naming it', async () => {
    h = await startHarness();
    const limited = await call('POST', '/api/tasks', ALICE, {
      ...spec('x'),
      timeLimitMs: 1_800_000,
    });
    expect(limited.status).toBe(201);
    const last = h.board.calls.at(-1);
    expect(last?.args[0]).toMatchObject({ timeLimitMs: 1_800_000 });
    for (const bad of [999, 1.5, '30m', 2_147_483_648]) {
      const r = await call('POST', '/api/tasks', ALICE, { ...spec('y'), timeLimitMs: bad });
      expect([r.status, errorCode(r)], String(bad)).toEqual([400, 'bad_request']);
      expect((r.json as { error: { message: string } }).error.message).toMatch(/^timeLimitMs/);
    }
    expect(h.board.calls.filter((c) => c.op === 'createTask').length).toBe(1);
  });

  it('rejects a body over maxHttpBody with 413', async () => {
    h = await startHarness({ maxHttpBody: 256 });
    const big = await call('POST', '/api/tasks', ALICE, { ...spec('x'), title: 'y'.repeat(1000) });
    expect([big.status, errorCode(big)]).toEqual([413, 'payload_too_large']);
  });

  it('maps the runtime’s typed errors to statuses', async () => {
    h = await startHarness();
    const invalid = await call('POST', '/api/tasks', ALICE, { ...spec('x'), image: 'invalid' });
    expect([invalid.status, errorCode(invalid)]).toEqual([422, 'invalid']);
    await call('POST', '/api/tasks', ALICE, spec('a'));
    const retryRunning = await call('POST', '/api/tasks/t1/retry', ALICE);
    expect([retryRunning.status, errorCode(retryRunning)]).toEqual([409, 'conflict']);
    // The node is stopping: try again (another node, or this one started again).
    const stopping = await call('POST', '/api/tasks', ALICE, { ...spec('x'), image: 'stopping' });
    expect([stopping.status, errorCode(stopping)]).toEqual([503, 'unavailable']);
    expect(stopping.headers.get('retry-after')).not.toBeNull();
  });

  it('hides other users’ tasks as not_found; the admin may act on any', async () => {
    h = await startHarness();
    await call('POST', '/api/tasks', ALICE, spec('a'));
    const bobCancels = await call('POST', '/api/tasks/t1/cancel', BOB);
    expect([bobCancels.status, errorCode(bobCancels)]).toEqual([404, 'not_found']);
    expect((await call('POST', '/api/tasks/t1/cancel', ADMIN)).status).toBe(204);
    expect(h.board.get('t1').status).toBe('cancelled');
    const retried = await call('POST', '/api/tasks/t1/retry', ALICE);
    expect(retried.status).toBe(202);
    expect(h.board.get('t1').attempt).toBe(2);
  });

  it('refuses task creation with the admin token: tasks belong to users', async () => {
    h = await startHarness();
    const r = await call('POST', '/api/tasks', ADMIN, spec('a'));
    expect([r.status, errorCode(r)]).toEqual([403, 'forbidden']);
  });
});

describe('caps and pool', () => {
  it('lets only the admin set a cap', async () => {
    h = await startHarness();
    const byUser = await call('PUT', '/api/users/alice/cap', ALICE, { maxRunning: 5 });
    expect([byUser.status, errorCode(byUser)]).toEqual([403, 'forbidden']);
    expect((await call('PUT', '/api/users/alice/cap', ADMIN, { maxRunning: 1 })).status).toBe(204);
    expect((await call('PUT', '/api/users/bob/cap', ADMIN, { maxRunning: null })).status).toBe(204);
    const bad = await call('PUT', '/api/users/bob/cap', ADMIN, { maxRunning: -1 });
    expect(errorCode(bad)).toBe('bad_request');
    expect(h.board.calls.filter((c) => c.op === 'setUserCap').map((c) => c.args)).toEqual([
      ['alice', 1],
      ['bob', null],
    ]);
  });

  it('shows a user only their own row of the pool; the admin every row', async () => {
    h = await startHarness();
    await call('POST', '/api/tasks', ALICE, spec('a'));
    await call('POST', '/api/tasks', BOB, spec('b'));
    const mine = (await call('GET', '/api/pool', ALICE)).json as { users: { userId: string }[] };
    expect(mine.users.map((u) => u.userId)).toEqual(['alice']);
    const all = (await call('GET', '/api/pool', ADMIN)).json as {
      users: unknown[];
      running: number;
    };
    expect([all.users.length, all.running]).toEqual([2, 2]);
  });

  it('serves a job and its stored output to its user and the admin, never to another user', async () => {
    h = await startHarness();
    await call('POST', '/api/tasks', ALICE, {
      ...spec('a'),
      env: { TOKEN: 'secret-value', HOME: '/x' },
    });
    for (let i = 1; i <= 5; i += 1) h.board.output('t1', `line ${i}`);
    h.board.finish('t1', 0);
    const detail = await call('GET', '/api/tasks/t1', ALICE);
    expect(detail.status).toBe(200);
    expect(detail.json).toMatchObject({
      taskId: 't1',
      userId: 'alice',
      image: 'alpine:3',
      command: ['echo', 'a'],
      envKeys: ['HOME', 'TOKEN'],
      attempts: [{ sessionId: 's1', attempt: 1, status: 'succeeded', exitCode: 0 }],
    });
    expect(JSON.stringify(detail.json)).not.toContain('secret-value');
    expect((await call('GET', '/api/tasks/t1', ADMIN)).status).toBe(200);
    const page = await call('GET', '/api/tasks/t1/sessions/s1/output?from=1&count=2', ALICE);
    expect(page.json).toEqual({
      sessionId: 's1',
      from: 1,
      lines: ['line 2', 'line 3'],
      totalLines: 5,
      totalBytes: 35,
      truncated: false,
    });
    const tail = await call('GET', '/api/tasks/t1/sessions/s1/output?count=2', ADMIN);
    expect((tail.json as { lines: string[] }).lines).toEqual(['line 4', 'line 5']);
    const file = await fetch(`${h.server.url}/api/tasks/t1/sessions/s1/output.txt`, {
      headers: { authorization: `Bearer ${ALICE}` },
    });
    expect([file.status, file.headers.get('content-disposition'), await file.text()]).toEqual([
      200,
      'attachment; filename="t1-s1.log"',
      'line 1\nline 2\nline 3\nline 4\nline 5\n',
    ]);
    // Bob reads none of it: every route answers as if the task did not exist.
    for (const path of [
      '/api/tasks/t1',
      '/api/tasks/t1/sessions/s1/output',
      '/api/tasks/t1/sessions/s1/output.txt',
    ]) {
      const r = await call('GET', path, BOB);
      expect([path, r.status, errorCode(r)]).toEqual([path, 404, 'not_found']);
    }
    expect(errorCode(await call('GET', '/api/tasks/t1/sessions/s1/output?count=0', ALICE))).toBe(
      'bad_request',
    );
    expect(errorCode(await call('GET', '/api/tasks/t1/sessions/s1/output?page=2', ALICE))).toBe(
      'bad_request',
    );
  });

  it('serves run statistics: durations to anyone signed in, the hour of points to the admin only', async () => {
    h = await startHarness();
    await call('POST', '/api/tasks', ALICE, spec('a'));
    h.clock.advance(4000);
    h.board.finish('t1', 0);
    h.clock.advance(10_000);
    const mine = (await call('GET', '/api/stats', ALICE)).json as {
      recentDurationsMs: number[];
      series: unknown[];
    };
    expect(mine).toEqual({ recentDurationsMs: [4000], series: [] });
    const all = (await call('GET', '/api/stats', ADMIN)).json as {
      series: Array<{ running: number }>;
    };
    expect(all.series.map((p) => p.running)).toEqual([0]);
    expect((await call('GET', '/api/stats', null)).status).toBe(401);
  });
});

describe('auth, routes, health, metrics, page', () => {
  it('answers 401 without a token or with a wrong one', async () => {
    h = await startHarness();
    for (const token of [null, 'wrong-token-0123456789']) {
      const r = await call('GET', '/api/pool', token);
      expect([r.status, errorCode(r)]).toEqual([401, 'unauthorized']);
      expect(r.headers.get('www-authenticate')).toBe('Bearer');
    }
  });

  it('answers 404 for unknown paths and 405 with Allow for wrong methods', async () => {
    h = await startHarness();
    expect(errorCode(await call('GET', '/nope', ALICE))).toBe('not_found');
    const wrong = await call('DELETE', '/api/tasks', ALICE);
    expect([wrong.status, wrong.headers.get('allow')]).toEqual([405, 'POST']);
  });

  it('serves /healthz without a token', async () => {
    h = await startHarness();
    expect(await call('GET', '/healthz', null)).toMatchObject({ status: 200, json: { ok: true } });
  });

  it('answers HEAD /healthz like GET, without a body (load balancers probe with it)', async () => {
    h = await startHarness();
    const head = await rawExchange(
      h.server.port,
      'HEAD /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    expect(head.status).toBe(200);
    expect(head.text).toMatch(/\r\ncontent-type: application\/json/i);
    expect(head.text.endsWith('\r\n\r\n')).toBe(true);
  });

  it('reads a target starting with // as a path, never as a host', async () => {
    h = await startHarness();
    const raw = (target: string) =>
      rawExchange(
        h.server.port,
        `GET ${target} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ALICE}\r\nConnection: close\r\n\r\n`,
      );
    const slashed = await raw('//api/pool');
    expect(slashed.status).toBe(404);
    expect(slashed.text).toContain(
      '{"error":{"code":"not_found","message":"no route //api/pool"}}',
    );
    // `//api/pool` read as the host `api` was the path `/pool`: the same refusal as this one.
    expect((await raw('//healthz/healthz')).text).toContain('no route //healthz/healthz');
    expect((await raw('/api/pool')).status).toBe(200);
  });

  it('serves /metrics in Prometheus text to the admin only', async () => {
    h = await startHarness();
    await call('POST', '/api/tasks', ALICE, spec('a'));
    await call('POST', '/api/tasks', ALICE, spec('b'));
    await call('POST', '/api/tasks', ALICE, spec('c'));
    h.board.fail('t1', 'container_replaced', true);
    expect((await call('GET', '/metrics', ALICE)).status).toBe(403);
    const r = await call('GET', '/metrics', ADMIN);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = r.json as string;
    expect(text).toContain('roundtable_queue_depth{user="alice"} 0');
    expect(text).toContain('roundtable_running{user="alice"} 2');
    expect(text).toContain('roundtable_wait_seconds_count 3');
    expect(text).toContain('roundtable_give_ups_total{reason="container_replaced"} 1');
    expect(text).toContain('roundtable_restarts_total 0');
    // Wait samples are reported once: a second scrape does not double them.
    expect((await call('GET', '/metrics', ADMIN)).json).toContain(
      'roundtable_wait_seconds_count 3',
    );
  });

  it('counts what it refused on /metrics, by code: requests and WebSocket upgrades', async () => {
    h = await startHarness();
    await call('GET', '/api/pool', null);
    await call('GET', '/api/pool', 'wrong-token-0123456789');
    await call('GET', '/metrics', ALICE);
    await call('GET', '/nope', ALICE);
    const upgrade = (path: string, auth: string) =>
      rawExchange(
        h.server.port,
        `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
          `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n${auth}\r\n`,
      );
    expect((await upgrade('/ws', '')).status).toBe(401);
    expect((await upgrade('/ws/x', '')).status).toBe(404);
    const text = (await call('GET', '/metrics', ADMIN)).json as string;
    const counts = Object.fromEntries(
      [...text.matchAll(/^roundtable_http_refusals_total\{code="([^"]+)"\} (\d+)$/gm)].map((m) => [
        m[1],
        Number(m[2]),
      ]),
    );
    expect(counts).toEqual({ unauthorized: 3, forbidden: 1, not_found: 2 });
  });

  it("exports the dispatch engine's numbers: ticks by outcome, their round trips and sizes, grants, DOWNs, dropped samples", async () => {
    h = await startHarness();
    h.board.tickSamples.push({ seconds: 0.004, ops: 20 }, { seconds: 0.03, ops: 3 });
    h.board.ticksTotal = { ok: 41, failed: 2 };
    h.board.grantsTotal = 17;
    h.board.ownerDownsTotal = { beat_stale: 1, lock_released: 2 };
    h.board.samplesDroppedTotal = { wait: 0, tick: 5 };
    const text = (await call('GET', '/metrics', ADMIN)).json as string;
    for (const line of [
      'roundtable_tick_seconds_bucket{le="0.005"} 1',
      'roundtable_tick_seconds_bucket{le="0.05"} 2',
      'roundtable_tick_seconds_count 2',
      'roundtable_tick_ops_bucket{le="5"} 1',
      'roundtable_tick_ops_bucket{le="20"} 2',
      'roundtable_tick_ops_sum 23',
      'roundtable_ticks_total{outcome="ok"} 41',
      'roundtable_ticks_total{outcome="failed"} 2',
      'roundtable_grants_total 17',
      'roundtable_owner_downs_total{reason="beat_stale"} 1',
      'roundtable_owner_downs_total{reason="lock_released"} 2',
      'roundtable_metric_samples_dropped_total{series="tick"} 5',
    ])
      expect(text).toContain(line);
    // Tick samples are handed out once too; the totals stay.
    const again = (await call('GET', '/metrics', ADMIN)).json as string;
    expect(again).toContain('roundtable_tick_seconds_count 2');
    expect(again).toContain('roundtable_ticks_total{outcome="ok"} 41');
  });

  it('exports the node’s health as 1 / 0 gauges, and none for a part it does not have', async () => {
    h = await startHarness();
    const board = h.board;
    const scrape = async (set: Partial<typeof board>) => {
      Object.assign(board, set);
      return (await call('GET', '/metrics', ADMIN)).json as string;
    };
    const gauges = (text: string) =>
      Object.fromEntries(
        [
          ...text.matchAll(
            /^roundtable_(taking_grants|notifications_listening|reconciler_leader|engine_available) (\d)$/gm,
          ),
        ].map((m) => [m[1], Number(m[2])]),
      );
    // No boot lock, no listener, no leader lock on this source: no series, not a 0.
    expect(gauges(await scrape({}))).toEqual({ engine_available: 1 });
    expect(
      gauges(await scrape({ lock: 'held', notifications: 'listening', reconciler: 'leader' })),
    ).toEqual({
      engine_available: 1,
      taking_grants: 1,
      notifications_listening: 1,
      reconciler_leader: 1,
    });
    // A node whose connections are not sessions after a cut: lost, polling, not leading.
    expect(
      gauges(
        await scrape({
          lock: 'lost',
          notifications: 'polling',
          reconciler: 'lost',
          engine: 'unavailable',
        }),
      ),
    ).toEqual({
      engine_available: 0,
      taking_grants: 0,
      notifications_listening: 0,
      reconciler_leader: 0,
    });
  });

  it('serves the page and its bundled script', async () => {
    h = await startHarness();
    const page = await call('GET', '/', null);
    expect(page.json).toContain('<script type="module" src="/board.js">');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    const script = await call('GET', '/board.js', null);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    expect(String(script.json).length).toBeGreaterThan(1000);
    expect(String(script.json)).not.toMatch(/from"node:|require\("node:/);
  });

  it('no other site may frame the page (clickjacking): frame-ancestors none and X-Frame-Options DENY', async () => {
    h = await startHarness();
    for (const method of ['GET', 'HEAD']) {
      const page = await call(method, '/', null);
      expect(page.status, method).toBe(200);
      expect(page.headers.get('content-type'), method).toContain('text/html');
      expect(page.headers.get('content-security-policy'), method).toContain(
        "frame-ancestors 'none'",
      );
      expect(page.headers.get('x-frame-options'), method).toBe('DENY');
    }
  });
});

describe('health', () => {
  it("/healthz needs no token and says whether the node's container engine answers", async () => {
    h = await startHarness();
    expect((await call('GET', '/healthz', null)).json).toMatchObject({
      ok: true,
      engine: 'available',
    });
    h.board.engine = 'unavailable';
    expect((await call('GET', '/healthz', null)).json).toMatchObject({ engine: 'unavailable' });
  });

  it('/healthz says when this boot lost its lock: it takes no grants until it holds it again', async () => {
    h = await startHarness();
    expect((await call('GET', '/healthz', null)).json).not.toHaveProperty('lock');
    h.board.lock = 'held';
    expect((await call('GET', '/healthz', null)).json).toMatchObject({
      lock: 'held',
      takingGrants: true,
    });
    h.board.lock = 'lost';
    expect((await call('GET', '/healthz', null)).json).toMatchObject({
      ok: true,
      lock: 'lost',
      takingGrants: false,
    });
  });

  it("/healthz says this node's part in the Reconciler's leadership", async () => {
    h = await startHarness();
    expect((await call('GET', '/healthz', null)).json).not.toHaveProperty('reconciler');
    h.board.reconciler = 'follower';
    expect((await call('GET', '/healthz', null)).json).toMatchObject({ reconciler: 'follower' });
    h.board.reconciler = 'leader';
    expect((await call('GET', '/healthz', null)).json).toMatchObject({ reconciler: 'leader' });
  });

  it("/healthz says how other nodes' ticks reach this node (polling alone behind a transaction pooler)", async () => {
    h = await startHarness();
    expect((await call('GET', '/healthz', null)).json).not.toHaveProperty('notifications');
    h.board.notifications = 'polling';
    expect((await call('GET', '/healthz', null)).json).toMatchObject({ notifications: 'polling' });
    h.board.notifications = 'listening';
    expect((await call('GET', '/healthz', null)).json).toMatchObject({
      notifications: 'listening',
    });
  });
});

describe('cluster nodes', () => {
  const node = {
    owner: 'a@b1',
    nodeId: 'a',
    bootId: 'b1',
    since: '2026-12-01T10:00:00.000Z',
    lastBeat: '2026-12-01T10:05:00.000Z',
    lock: 'held' as const,
    liveness: 'alive' as const,
    deadAfterMs: 10_000,
    self: true,
    sessionsOwned: 3,
  };
  it('GET /api/admin/nodes lists the boots to the admin only', async () => {
    h = await startHarness();
    h.board.nodes = [node, { ...node, owner: 'b@b2', nodeId: 'b', bootId: 'b2', self: false }];
    const denied = await call('GET', '/api/admin/nodes', ALICE);
    expect([denied.status, errorCode(denied)]).toEqual([403, 'forbidden']);
    expect((await call('GET', '/api/admin/nodes', null)).status).toBe(401);
    const r = await call('GET', '/api/admin/nodes', ADMIN);
    expect(r.status).toBe(200);
    expect((r.json as { nodes: { owner: string }[] }).nodes.map((n) => n.owner)).toEqual([
      'a@b1',
      'b@b2',
    ]);
  });
});

describe('admin dashboard', () => {
  it('GET /api/admin/activity gives the admin the series for a typed window, and no one else', async () => {
    h = await startHarness();
    h.board.activitySeries = { ...h.board.activitySeries, t: [1_800_000_000], queued: [4] };
    for (const token of [ALICE, BOB]) {
      const denied = await call('GET', '/api/admin/activity', token);
      expect([denied.status, errorCode(denied)]).toEqual([403, 'forbidden']);
    }
    expect((await call('GET', '/api/admin/activity', null)).status).toBe(401);
    expect(h.board.activityQueries).toEqual([]);
    const r = await call('GET', '/api/admin/activity', ADMIN);
    expect([r.status, (r.json as { queued: number[] }).queued]).toEqual([200, [4]]);
    await call('GET', '/api/admin/activity?minutes=5&at=2026-07-14T10:04:30%2B02:00', ADMIN);
    expect(h.board.activityQueries).toEqual([
      { minutes: 60 },
      { minutes: 5, at: new Date('2026-07-14T08:04:30Z') },
    ]);
    const refused: Array<[string, RegExp]> = [
      ['minutes=0', /^minutes:/],
      ['minutes=1441', /^minutes:/],
      ['minutes=1e3', /^minutes:/],
      ['minutes=-5', /^minutes:/],
      ['at=yesterday', /^at:/],
      ['at=2026-07-14T10:04:30', /^at:/],
      ['hours=1', /^hours:/],
    ];
    for (const [query, message] of refused) {
      const bad = await call('GET', `/api/admin/activity?${query}`, ADMIN);
      expect([bad.status, errorCode(bad)], query).toEqual([400, 'bad_request']);
      expect((bad.json as { error: { message: string } }).error.message, query).toMatch(message);
    }
    expect(h.board.activityQueries).toHaveLength(2);
  });
});
