/**
 * `roundtable logs` (src/cli/commands/logs.ts), in-process on temporary
 * PGlite directories: on the rows with no node (attempts finished, queued
 * and running written with the store's own transitions), then through a
 * running node on local processes, whose bytes must be the command's own
 * and the rows' after it stops. Exit codes: 9 for an attempt with no stored
 * output, 7 for no such task or attempt, 2 for a bad `--attempt`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/runCli.js';
import {
  claim,
  connect,
  createTaskWithSession,
  cutMarker,
  finishWithOutput,
  newId,
  retryTask,
} from '../../../src/db/index.js';
import { killRunGroup } from '../../containers/local/localFixture.js';
import { type Captured, capture } from '../cliCapture.js';

/** Opening PGlite afresh per command takes 1-4 s under CI's load; a test here runs a dozen. */
const COMMANDS_MS = 90_000;

/** Non-ASCII, and no final newline: both must reach stdout untouched. */
const PRINTED = 'héllo\nwörld € ✓';

/**
 * Longer than one read of the stored pieces (1 MiB), in 3-byte characters so
 * that a piece ends inside one: the bytes must still arrive whole, in order.
 */
const LONG_TAIL = `${'€'.repeat(400_000)}\nfirst try\n`;

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'rt-cli-logs-'));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Runs one command on `dir`; its exit code, stdout (text and bytes) and stderr. */
async function cli(dir: string, command: string, ...args: string[]) {
  const c = capture();
  const code = await runCli([command, '--data-dir', dir, ...args], c.io);
  return { code, out: c.out(), bytes: c.outBytes(), err: c.err() };
}

async function enqueue(dir: string, ...command: string[]): Promise<string> {
  const r = await cli(dir, 'enqueue', '--json', '--user', 'ann', '--', ...command);
  expect(r.code, r.err).toBe(0);
  return JSON.parse(r.out).taskId;
}

async function sessionIds(dir: string, taskId: string): Promise<string[]> {
  const r = await cli(dir, 'show', taskId, '--json');
  expect(r.code, r.err).toBe(0);
  return JSON.parse(r.out).attempts.map((a: { sessionId: string }) => a.sessionId);
}

describe('logs on the rows, with no node running', { timeout: COMMANDS_MS }, () => {
  let dir: string;
  let done: string;
  let queued: string;
  let running: string;
  beforeAll(async () => {
    dir = tempDir();
    // Through the CLI, so that it holds a place in line (a tick gives it one); this creates the store.
    queued = await enqueue(dir, 'sleep', '600');
    // The others as a node elsewhere ran them, through the store's own transitions, in
    // one open of the store (each CLI command opens PGlite afresh, the slow part here).
    const h = await connect({ dataDir: join(dir, 'pgdata') });
    try {
      const create = async (command: string[]) =>
        (
          await createTaskWithSession(h.db, {
            userId: 'ann',
            title: command.join(' '),
            spec: { image: 'alpine:3.20', command },
            now: new Date(),
          })
        ).session;
      const run = (sessionId: string) =>
        claim(h.db, { sessionId, epoch: 0, owner: 'node-a@b1', now: new Date() });
      const first = await create(['sh', '-c', 'echo hi']);
      done = first.taskId;
      const failed = await finishWithOutput(
        h.db,
        {
          sessionId: first.id,
          epoch: (await run(first.id)).epoch,
          status: 'failed',
          exitCode: 1,
          reason: 'exit_code',
          userRecoverable: false,
          now: new Date(),
        },
        // As a backend that kept only the tail hands it over: stored behind the cut's marker.
        { text: LONG_TAIL, totalBytes: 5_000_000, truncated: true },
      );
      const second = await retryTask(h.db, {
        taskId: done,
        expected: { sessionId: first.id, status: 'failed', epoch: failed.epoch },
        now: new Date(),
      });
      await finishWithOutput(
        h.db,
        {
          sessionId: second.id,
          epoch: (await run(second.id)).epoch,
          status: 'succeeded',
          exitCode: 0,
          now: new Date(),
        },
        { text: PRINTED, totalBytes: Buffer.byteLength(PRINTED), truncated: false },
      );
      const sleeping = await create(['sleep', '600']);
      running = sleeping.taskId;
      await run(sleeping.id);
    } finally {
      await h.close();
    }
  }, COMMANDS_MS);

  it('prints the latest attempt byte for byte, or the one --attempt names', async () => {
    const latest = await cli(dir, 'logs', done);
    expect(latest.code, latest.err).toBe(0);
    // Stdout is the output alone: the command's progress lines go to stderr.
    expect(latest.bytes.equals(Buffer.from(PRINTED, 'utf8'))).toBe(true);
    const first = await cli(dir, 'logs', done, '--attempt', '1');
    expect(first.code, first.err).toBe(0);
    const stored = cutMarker(Buffer.byteLength(LONG_TAIL), 5_000_000) + LONG_TAIL;
    expect(first.bytes.equals(Buffer.from(stored, 'utf8'))).toBe(true);
    const json = JSON.parse((await cli(dir, 'logs', done, '--attempt=1', '--json')).out);
    expect(json).toMatchObject({ attempt: 1, totalBytes: 5_000_000, truncated: true });
    expect(json.text).toBe(stored);
  });

  it('--json is one line: the attempt, its size and cut, and the text', async () => {
    const r = await cli(dir, 'logs', done, '--json');
    expect(r.code, r.err).toBe(0);
    expect(r.out.endsWith('}\n')).toBe(true);
    expect(JSON.parse(r.out)).toEqual({
      taskId: done,
      sessionId: (await sessionIds(dir, done))[1],
      attempt: 2,
      status: 'succeeded',
      totalBytes: Buffer.byteLength(PRINTED),
      truncated: false,
      text: PRINTED,
    });
  });

  it('an attempt with no stored output exits 9 saying why: in line, running, ended without any', async () => {
    const waiting = await cli(dir, 'logs', queued);
    expect([waiting.code, waiting.out]).toEqual([9, '']);
    expect(waiting.err).toMatch(
      /attempt 1 has no output yet: it is queued, (next in line|position \d+ in line); its output is stored when it ends/,
    );
    const run = await cli(dir, 'logs', running, '--json');
    expect([run.code, run.out]).toEqual([9, '']);
    expect(run.err).toContain('attempt 1 has no output yet: it is running');
    expect(run.err).toContain('the board shows it live');
    expect((await cli(dir, 'cancel', queued)).code).toBe(0);
    const cancelled = await cli(dir, 'logs', queued);
    expect(cancelled.code).toBe(9);
    expect(cancelled.err).toContain(
      'attempt 1 ended without output: cancelled (cancelled by admin)',
    );
  });

  it('no such task or attempt is 7; --attempt that is not a positive integer is 2, naming it', async () => {
    for (const id of [newId('task'), 'not a task id']) {
      const r = await cli(dir, 'logs', id);
      expect([r.code, r.err]).toEqual([7, expect.stringContaining(`no task ${id}`)]);
    }
    const none = await cli(dir, 'logs', done, '--attempt', '3');
    expect([none.code, none.err]).toEqual([
      7,
      expect.stringContaining(`task ${done} has no attempt 3: it has 1 to 2`),
    ]);
    for (const bad of ['0', '-1', '1.5', 'two']) {
      const r = await cli(dir, 'logs', done, `--attempt=${bad}`);
      expect([r.code, r.out], bad).toEqual([2, '']);
      expect(r.err).toContain('--attempt must be a positive integer');
    }
    expect((await cli(dir, 'logs', done, '--attempt')).code).toBe(2);
  });
});

/** Waits for a starting node's `ready` log record. */
async function ready(node: Captured): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!node.out().includes('"msg":"ready"')) {
    if (Date.now() > deadline) throw new Error(`no ready record: ${node.err()} ${node.out()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** `taskId`'s latest attempt once it is `wanted` and its run recorded (30 s deadline). */
async function until(
  dir: string,
  taskId: string,
  wanted: string,
): Promise<{ status: string; handle: string }> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const r = await cli(dir, 'show', taskId, '--json');
    const last = JSON.parse(r.out).attempts.at(-1);
    if (last?.status === wanted && last.handle !== null) return last;
    if (Date.now() > deadline) throw new Error(`${taskId} is ${last?.status}, not ${wanted}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('logs through a running node', () => {
  it("prints the run's own bytes, the rows' bytes after the node stops, and exit 9 while it runs", async () => {
    const dir = tempDir();
    const node = capture();
    const started = runCli(
      ['start', '--port', '0', '--backend', 'local', '--users', 'ann', '--data-dir', dir],
      node.io,
    );
    let printed = '';
    let handle = '';
    let viaNode: { code: number; bytes: Buffer; json: string } = {
      code: -1,
      bytes: Buffer.alloc(0),
      json: '',
    };
    try {
      await ready(node);
      printed = await enqueue(dir, 'printf', '%s', PRINTED);
      const sleeping = await enqueue(dir, 'sleep', '600');
      await until(dir, printed, 'succeeded');
      handle = (await until(dir, sleeping, 'running')).handle;
      const r = await cli(dir, 'logs', printed);
      viaNode = {
        code: r.code,
        bytes: r.bytes,
        json: (await cli(dir, 'logs', printed, '--json')).out,
      };
      const run = await cli(dir, 'logs', sleeping);
      expect([run.code, run.out]).toEqual([9, '']);
      expect(run.err).toContain('has no output yet: it is running');
      expect((await cli(dir, 'cancel', sleeping)).code).toBe(0);
    } finally {
      node.signal('SIGINT');
      expect(await started).toBe(0);
      // A local run outlives its node: one the cancel above did not reach ends here.
      if (handle !== '') killRunGroup(handle);
    }
    expect(viaNode.code).toBe(0);
    expect(viaNode.bytes.equals(Buffer.from(PRINTED, 'utf8'))).toBe(true);
    expect(JSON.parse(viaNode.json)).toMatchObject({
      attempt: 1,
      status: 'succeeded',
      text: PRINTED,
    });
    // With the node stopped, the rows give the same bytes and the same JSON.
    const fromRows = await cli(dir, 'logs', printed);
    expect(fromRows.bytes.equals(viaNode.bytes)).toBe(true);
    expect((await cli(dir, 'logs', printed, '--json')).out).toBe(viaNode.json);
  }, 90_000);
});
