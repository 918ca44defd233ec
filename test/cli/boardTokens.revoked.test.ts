/**
 * A user dropped from `--users`, end to end on a PGlite directory: the
 * restarted node logs that they lost access, their old token opens nothing
 * (HTTP, WebSocket, the CLI through the node), the ready record lists only
 * the users configured now, and the task they queued before still runs to
 * completion: only access is revoked, accepted work is not.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import WebSocket from 'ws';
import { runCli } from '../../src/cli/runCli.js';
import { type Captured, capture } from './cliCapture.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'rt-revoked-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const records = (node: Captured) =>
  node
    .out()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

async function start(users: string) {
  const node = capture({ ROUNDTABLE_SIM_SPEED: '50' });
  const running = runCli(['start', '--port', '0', '--users', users, '--data-dir', dir], node.io);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const ready = records(node).find((r) => r.msg === 'ready');
    if (ready !== undefined) return { node, running, ready };
    if (Date.now() > deadline) throw new Error(`no ready record: ${node.err()} ${node.out()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const upgradeStatus = (url: string, token: string) =>
  new Promise<number>((resolve, reject) => {
    const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/ws`, {
      headers: { authorization: `Bearer ${token}` },
    });
    ws.on('open', () => {
      ws.close();
      resolve(101);
    });
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.on('error', reject);
  });

it('a user dropped from --users loses board access at the next start; their queued task still runs', async () => {
  const first = await start('demo');
  const tokenIn = (boardUrl: unknown) => String(boardUrl).split('#token=')[1] ?? '';
  const demoToken = tokenIn((first.ready.users as Record<string, string>).demo);
  first.node.signal('SIGINT');
  expect(await first.running).toBe(0);
  // Queued while no node runs, for the next start to run.
  const queued = capture();
  expect(
    await runCli(
      ['enqueue', '--json', '--user', 'demo', '--data-dir', dir, '--', 'echo', 'x'],
      queued.io,
    ),
  ).toBe(0);
  const taskId = JSON.parse(queued.out()).taskId as string;

  const second = await start('a');
  try {
    expect(Object.keys(second.ready.users as object)).toEqual(['a']);
    const warning = records(second.node).find((r) => Array.isArray(r.users) && r.level === 40);
    expect(warning).toMatchObject({ users: ['demo'] });
    expect(String(warning?.msg)).toMatch(/no longer work: demo/);
    const url = String(second.ready.url);
    const post = await fetch(`${url}/api/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${demoToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 't', image: 'local', command: ['echo', 'x'] }),
    });
    expect(post.status).toBe(401);
    await post.body?.cancel();
    expect(await upgradeStatus(url, demoToken)).toBe(401);
    const aToken = tokenIn((second.ready.users as Record<string, string>).a);
    expect(await upgradeStatus(url, aToken)).toBe(101);
    const viaNode = capture();
    expect(
      await runCli(['enqueue', '--user', 'demo', '--data-dir', dir, '--', 'echo', 'y'], viaNode.io),
    ).toBe(2);
    expect(viaNode.err()).toContain('no token for user demo');
    // The work demo queued before is theirs still, and runs.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const show = capture();
      expect(await runCli(['show', taskId, '--json', '--data-dir', dir], show.io)).toBe(0);
      if (show.out().includes('"succeeded"')) break;
      if (Date.now() > deadline) throw new Error(`demo's task did not finish: ${show.out()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    second.node.signal('SIGINT');
    expect(await second.running).toBe(0);
  }
  // Configured again, demo gets the same URL back.
  const third = await start('a,demo');
  try {
    expect(String((third.ready.users as Record<string, string>).demo)).toContain(demoToken);
    expect(JSON.parse(readFileSync(join(dir, 'tokens.json'), 'utf8')).dropped).toBeUndefined();
  } finally {
    third.node.signal('SIGINT');
    expect(await third.running).toBe(0);
  }
}, 120_000);
