/**
 * examples/http-app.mjs as a real process on the checkout's sources: a job
 * submitted over the app's own HTTP route runs to the end, the board page and
 * a board WebSocket answer on the app's own port, and SIGTERM stops it cleanly (exit 0). Real time: every
 * wait is bounded.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { SUBPROTOCOL } from '../../src/board/boardProtocol.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('examples/http-app.mjs', () => {
  it('submits on request, serves the board, and stops on SIGTERM with exit 0', async () => {
    // The runs' directory is the test's, removed after (the app makes one of its own otherwise).
    const runs = mkdtempSync(join(tmpdir(), 'rt-app-runs-'));
    const child = spawn(
      process.execPath,
      ['--conditions=roundtable-source', '--import', 'tsx', 'examples/http-app.mjs'],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', PORT: '0', APP_RUNS_DIR: runs },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const exited = new Promise<number | null>((resolve) =>
      child.on('exit', (code) => resolve(code)),
    );
    try {
      const deadline = Date.now() + 150_000;
      while (!out.includes('\n')) {
        if (Date.now() > deadline) throw new Error(`no address line: ${out} ${err}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const urls = JSON.parse(out.split('\n')[0] ?? '{}') as { app: string; board: string };
      const post = () =>
        fetch(`${urls.app}/jobs?user=ann`, {
          method: 'POST',
          headers: { 'idempotency-key': 'hello-once' },
          signal: AbortSignal.timeout(20_000),
        });
      const created = await post();
      expect(created.status).toBe(201);
      const { taskId } = (await created.json()) as { taskId: string };
      // Sent again with the same key: the same job, not a second one.
      const again = await post();
      expect(again.status).toBe(200);
      expect(((await again.json()) as { taskId: string }).taskId).toBe(taskId);
      let column = '';
      while (column !== 'done') {
        if (Date.now() > deadline) throw new Error(`job not done: ${column}`);
        const res = await fetch(`${urls.app}/jobs/${taskId}?user=ann`, {
          signal: AbortSignal.timeout(10_000),
        });
        column = ((await res.json()) as { column: string }).column;
        if (column === 'failed') throw new Error('the job failed');
        await new Promise((r) => setTimeout(r, 100));
      }
      const page = await fetch(urls.board.split('#')[0] ?? '', {
        signal: AbortSignal.timeout(20_000),
      });
      expect(page.status).toBe(200);
      expect(new URL(urls.board).port).toBe(new URL(urls.app).port);
      const token = new URL(urls.board).hash.replace('#token=', '');
      const ws = new WebSocket(`${urls.app.replace('http', 'ws')}/ws`, [SUBPROTOCOL], {
        headers: { authorization: `Bearer ${token}` },
      });
      const hello = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no hello')), 20_000);
        ws.once('message', (d) => {
          clearTimeout(timer);
          resolve((JSON.parse(String(d)) as { type: string }).type);
        });
        ws.once('error', reject);
      });
      expect(hello).toBe('hello');
      ws.terminate();
      // The app's own route still answers on the same port.
      const missing = await fetch(`${urls.app}/jobs/nope?user=ann`, {
        signal: AbortSignal.timeout(10_000),
      });
      expect(missing.status).toBe(404);
      child.kill('SIGTERM');
      const code = await Promise.race([
        exited,
        new Promise((r) => setTimeout(() => r('still running'), 30_000)),
      ]);
      expect(code, err).toBe(0);
      expect(out).toContain('stopped');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(runs, { recursive: true, force: true });
    }
  }, 240_000);
});
