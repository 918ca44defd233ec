/**
 * The CLI against a Postgres server (`ROUNDTABLE_TEST_DATABASE_URL`), in a
 * database created for this file and dropped after: migrate, enqueue,
 * status, cancel, retry and show, and a start that runs the queue. Without the variable the suite is
 * skipped with the reason in its title; with CI=true it fails instead, as the
 * db suites do, so CI cannot silently stop testing the server.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/runCli.js';
import { capture } from './cliCapture.js';

const SERVER = process.env.ROUNDTABLE_TEST_DATABASE_URL;
const CI = process.env.CI === 'true';

if (SERVER === undefined && !CI) {
  describe.skip('cli on Postgres: skipped, ROUNDTABLE_TEST_DATABASE_URL is not set', () => {
    it('needs a server', () => {});
  });
} else {
  describe('cli on Postgres', () => {
    const name = `rt_cli_${randomBytes(6).toString('hex')}`;
    let url: string;
    let dir: string;
    const admin = () => new pg.Client({ connectionString: SERVER });

    beforeAll(async () => {
      if (SERVER === undefined) throw new Error('CI=true needs ROUNDTABLE_TEST_DATABASE_URL');
      const c = admin();
      await c.connect();
      await c.query(`CREATE DATABASE ${name}`);
      await c.end();
      const u = new URL(SERVER);
      u.pathname = `/${name}`;
      url = u.toString();
      dir = mkdtempSync(join(tmpdir(), 'rt-cli-pg-'));
    });

    afterAll(async () => {
      if (dir) rmSync(dir, { recursive: true, force: true });
      if (SERVER === undefined) return;
      const c = admin();
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    });

    const flags = () => ['--database-url', url, '--data-dir', dir];

    it('migrates, enqueues into the rows, and counts them', async () => {
      const m = capture();
      expect(await runCli(['migrate', '--json', ...flags()], m.io), m.err()).toBe(0);
      expect(JSON.parse(m.out()).current).toBeGreaterThan(0);
      for (const user of ['ann', 'bo']) {
        const e = capture();
        expect(
          await runCli(['enqueue', '--user', user, '--json', ...flags(), '--', 'echo', 'hi'], e.io),
          e.err(),
        ).toBe(0);
        expect(JSON.parse(e.out()).via).toBe('rows');
      }
      const s = capture();
      expect(await runCli(['status', '--json', ...flags()], s.io)).toBe(0);
      const report = JSON.parse(s.out());
      expect(report.source).toMatch(/^rows of Postgres at /);
      expect(report.source).not.toContain('@'); // never the credentials
      expect(report.queued).toBe(2);
      expect(report.head.map((h: { userId: string }) => h.userId)).toEqual(['ann', 'bo']);
    });

    it('cancels a queued task in the rows, retries it, and shows both attempts', async () => {
      const run = async (...args: string[]) => {
        const c = capture();
        const code = await runCli([args[0] ?? '', ...flags(), ...args.slice(1)], c.io);
        return { code, out: c.out(), err: c.err() };
      };
      const e = await run('enqueue', '--user', 'cy', '--json', '--', 'echo', 'x');
      const taskId = JSON.parse(e.out).taskId;
      expect((await run('cancel', taskId)).out).toBe(`${taskId}: cancelled (via rows)\n`);
      expect((await run('cancel', taskId)).code).toBe(8);
      const r = await run('retry', taskId, '--json');
      expect(r.code, r.err).toBe(0);
      expect(JSON.parse(r.out).position).toBeGreaterThan(0);
      const shown = await run('show', taskId, '--json');
      expect(shown.code, shown.err).toBe(0);
      expect(JSON.parse(shown.out).attempts).toMatchObject([
        { attempt: 1, status: 'cancelled' },
        { attempt: 2, status: 'queued' },
      ]);
      // Left queued: the start below runs it with the others.
    });

    it('cancel from the rows while a node runs the attempt: the row at once, then the node lets the run go and its slot back', async () => {
      // A database of its own: the other tests leave rows behind.
      const own = `rt_cli_${randomBytes(6).toString('hex')}`;
      const c = admin();
      await c.connect();
      await c.query(`CREATE DATABASE ${own}`);
      const u = new URL(SERVER ?? '');
      u.pathname = `/${own}`;
      // The node's directory and the CLI's: the node runs elsewhere, as on another machine.
      const nodeDir = mkdtempSync(join(tmpdir(), 'rt-cli-pg-node-'));
      const ownDir = mkdtempSync(join(tmpdir(), 'rt-cli-pg-cancel-'));
      const ownFlags = ['--database-url', u.toString(), '--data-dir', ownDir];
      const cli = async (...args: string[]) => {
        const r = capture();
        const code = await runCli([args[0] ?? '', ...ownFlags, ...args.slice(1)], r.io);
        return { code, out: r.out(), err: r.err() };
      };
      const attempts = async (taskId: string) =>
        JSON.parse((await cli('show', taskId, '--json')).out).attempts as Array<{ status: string }>;
      const node = capture();
      // The simulated backend: the run lives in the node, so the CLI has no container to remove.
      const running = runCli(
        [
          'start',
          '--port',
          '0',
          '--backend',
          'simulated',
          '--reconcile-ms',
          '1000',
          '--database-url',
          u.toString(),
          '--data-dir',
          nodeDir,
        ],
        node.io,
      );
      try {
        const enqueue = async (user: string) => {
          const r = await cli('enqueue', '--user', user, '--json', '--', 'sleep', '3600');
          expect(r.code, r.err).toBe(0);
          return JSON.parse(r.out).taskId as string;
        };
        // The global cap (4 by default) full: two runs each for two users.
        const held = [
          await enqueue('ann'),
          await enqueue('ann'),
          await enqueue('bo'),
          await enqueue('bo'),
        ];
        const deadline = Date.now() + 60_000;
        const allRun = async (ids: string[]) =>
          (await Promise.all(ids.map(attempts))).every((a) => a.at(-1)?.status === 'running');
        while (!(await allRun(held))) {
          if (Date.now() > deadline) throw new Error(`not running: ${node.err()}`);
          await new Promise((r) => setTimeout(r, 100));
        }
        const next = await enqueue('cy');
        expect((await attempts(next))[0]?.status).toBe('queued');

        const cancelled = await cli('cancel', held[0] ?? '', '--json');
        expect(cancelled.code, cancelled.err).toBe(0);
        expect(JSON.parse(cancelled.out)).toMatchObject({
          via: 'rows',
          container: { kind: 'none', why: 'a simulated run lives and ends with its node' },
        });
        expect(await attempts(held[0] ?? '')).toMatchObject([{ status: 'cancelled' }]);
        // The node's runner of it ends and gives its slot back: the queued run starts.
        while ((await attempts(next))[0]?.status !== 'running') {
          if (Date.now() > deadline) throw new Error(`the slot never came back: ${node.err()}`);
          await new Promise((r) => setTimeout(r, 100));
        }
        expect(await attempts(held[0] ?? '')).toMatchObject([{ status: 'cancelled' }]);
      } finally {
        node.signal('SIGINT');
        expect(await running).toBe(0);
        rmSync(ownDir, { recursive: true, force: true });
        rmSync(nodeDir, { recursive: true, force: true });
        await c.query(`DROP DATABASE IF EXISTS ${own} WITH (FORCE)`);
        await c.end();
      }
    }, 120_000);

    it('start runs the queued rows to the end and stops on Ctrl-C', async () => {
      const node = capture();
      const running = runCli(['start', '--port', '0', '--sim-speed', '20', ...flags()], node.io);
      const deadline = Date.now() + 60_000;
      const succeeded = () => (node.out().match(/→ succeeded/g) ?? []).length;
      while (succeeded() < 3) {
        if (Date.now() > deadline) throw new Error(`not finished: ${node.err()}\n${node.out()}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      node.signal('SIGINT');
      expect(await running).toBe(0);
      const s = capture();
      expect(await runCli(['status', '--json', ...flags()], s.io)).toBe(0);
      const report = JSON.parse(s.out());
      expect([report.queued, report.running]).toEqual([0, 0]);
      expect(report.users.map((u: { succeeded: number }) => u.succeeded)).toEqual([1, 1, 1]);
    }, 90_000);

    it('a node started with other caps than those in force says so, and status then shows its caps, not its own defaults', async () => {
      // The node above left its caps (the defaults, 4 and 2) in force.
      const node = capture();
      const running = runCli(
        ['start', '--port', '0', '--max-running', '3', '--user-cap', '1', ...flags()],
        node.io,
      );
      const deadline = Date.now() + 60_000;
      try {
        while (!node.out().includes('"msg":"ready"')) {
          if (Date.now() > deadline) throw new Error(`no ready record: ${node.err()}`);
          await new Promise((r) => setTimeout(r, 50));
        }
        expect(node.out()).toContain(
          'the caps in force are 4 runners, 2 per user; this node grants under 3 runners, 1 per user',
        );
        // `status` with none of the node's flags: the caps its ticks wrote.
        for (;;) {
          const s = capture();
          expect(await runCli(['status', '--json', '--database-url', url], s.io)).toBe(0);
          const report = JSON.parse(s.out());
          if (report.maxRunning === 3) {
            expect(report.users.map((u: { cap: number }) => u.cap)).toEqual([1, 1, 1]);
            break;
          }
          if (Date.now() > deadline)
            throw new Error(`status never showed the node's caps: ${s.out()}`);
          await new Promise((r) => setTimeout(r, 100));
        }
      } finally {
        node.signal('SIGINT');
        expect(await running).toBe(0);
      }
    }, 90_000);
  });
}
