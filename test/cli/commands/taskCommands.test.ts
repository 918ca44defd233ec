/**
 * `show`, `cancel` and `retry` (src/cli/commands/show.ts, cancel.ts,
 * retry.ts), in-process on one temporary PGlite directory: first straight
 * on the rows with no node, then through a running node, whose answers must
 * be the rows' answers. Exit codes: 7 for a task that does not exist, 8 for
 * one in another state.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/runCli.js';
import { parseLocalHandle } from '../../../src/containers/local/localHandle.js';
import { connect, newId, tick } from '../../../src/db/index.js';
import { killRunGroup } from '../../containers/local/localFixture.js';
import { type Captured, capture } from '../cliCapture.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'rt-cli-tasks-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Every command opens the PGlite directory afresh (1-4 s under CI's load),
 * and a test here runs up to a dozen: the default 30 s was met with ~1 s to
 * spare on a loaded machine, and once not at all.
 */
const COMMANDS_MS = 90_000;

/** Runs one command on the test's directory; its exit code, stdout and stderr. */
async function cli(
  command: string,
  ...args: string[]
): Promise<{ code: number; out: string; err: string }> {
  const c = capture();
  // Before the words: enqueue's command follows `--`.
  const code = await runCli([command, '--data-dir', dir, ...args], c.io);
  return { code, out: c.out(), err: c.err() };
}

async function enqueue(user: string, ...command: string[]): Promise<string> {
  const r = await cli('enqueue', '--json', '--user', user, '--', ...command);
  expect(r.code, r.err).toBe(0);
  return JSON.parse(r.out).taskId;
}

async function attempts(
  taskId: string,
): Promise<Array<{ status: string; attempt: number; position: number | null }>> {
  const r = await cli('show', taskId, '--json');
  expect(r.code, r.err).toBe(0);
  return JSON.parse(r.out).attempts;
}

describe('on the rows, with no node running', { timeout: COMMANDS_MS }, () => {
  it('a task in a store not created yet does not exist (7), and nothing is created', async () => {
    for (const command of ['show', 'cancel', 'retry']) {
      const r = await cli(command, 'tsk_nothing');
      expect(r.code, r.err).toBe(7);
      expect(r.err).toContain('no task tsk_nothing');
    }
    const status = await cli('status', '--json');
    expect(status.out).toContain('not created yet');
  });

  it('each names exactly one task (2)', async () => {
    for (const command of ['show', 'cancel', 'retry']) {
      const none = await cli(command);
      expect(none.code).toBe(2);
      expect(none.err).toContain(`name the task, e.g. roundtable ${command} tsk_`);
      const two = await cli(command, 'tsk_a', 'tsk_b');
      expect(two.code).toBe(2);
      expect(two.err).toContain("unexpected argument 'tsk_b'");
    }
  });

  it('show prints the task and its attempt; unknown and malformed ids do not exist (7)', async () => {
    const taskId = await enqueue('ann', 'sh', '-c', 'echo hi');
    const text = await cli('show', taskId);
    expect(text.code, text.err).toBe(0);
    expect(text.out.split('\n').slice(0, 6)).toEqual([
      `${taskId}  sh -c echo hi`,
      expect.stringMatching(/^ {2}user ann, created \d{4}-/),
      "  runs sh -c 'echo hi' in alpine:3.20",
      '',
      'attempts:',
      expect.stringMatching(
        /^ {2}1\. queued, (next in line|position \d+ in line), enqueued \d{4}-/,
      ),
    ]);
    for (const id of [newId('task'), 'not a task id']) {
      for (const command of ['show', 'cancel', 'retry']) {
        const r = await cli(command, id);
        expect(r.code, `${command} ${id}: ${r.err}`).toBe(7);
      }
    }
  });

  it('cancel takes a queued attempt out of the line, once; retry queues a new one, once', async () => {
    const taskId = await enqueue('bo', 'echo', 'x');
    const first = await cli('cancel', taskId);
    expect(first.code, first.err).toBe(0);
    expect(first.out).toBe(`${taskId}: cancelled (via rows)\n`);
    expect(await attempts(taskId)).toMatchObject([{ attempt: 1, status: 'cancelled' }]);
    expect((await cli('show', taskId)).out).toContain('1. cancelled (cancelled by admin)');

    const again = await cli('cancel', taskId);
    expect(again.code).toBe(8);
    expect(again.err).toContain('is cancelled: nothing to cancel');

    const retried = await cli('retry', taskId, '--json');
    expect(retried.code, retried.err).toBe(0);
    expect(JSON.parse(retried.out)).toMatchObject({ taskId, via: 'rows' });
    expect(JSON.parse(retried.out).position).toBeGreaterThan(0);
    // The new attempt's place, as show reads it, is the one retry printed (nothing ran between).
    expect(await attempts(taskId)).toMatchObject([
      { attempt: 1, status: 'cancelled', position: null },
      { attempt: 2, status: 'queued', position: JSON.parse(retried.out).position },
    ]);
    const twice = await cli('retry', taskId);
    expect(twice.code).toBe(8);
    expect(twice.err).toContain('is queued: only a failed or cancelled task is retried');
    // The status line agrees: bo's retried attempt waits.
    const status = JSON.parse((await cli('status', '--json')).out);
    expect(status.users.find((u: { userId: string }) => u.userId === 'bo')).toMatchObject({
      queued: 1,
      cancelled: 1,
    });
  });

  it('a running attempt with no container recorded yet is cancelled on its row, then retried', async () => {
    const taskId = await enqueue('cy', 'sleep', '600');
    // A node elsewhere took it: granted through a tick of its own, no handle written yet.
    const h = await connect({ dataDir: join(dir, 'pgdata') });
    try {
      const done = await tick(h.db, {
        owner: 'node-x@boot-1',
        now: new Date(),
        globalCap: 100,
        defaultUserCap: 100,
        want: 100,
        ops: [],
      });
      expect(done.granted.map((g) => g.task?.id ?? g.session.taskId)).toContain(taskId);
    } finally {
      await h.close();
    }
    expect(await attempts(taskId)).toMatchObject([{ status: 'running', position: 0 }]);
    const r = await cli('cancel', taskId, '--json');
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({
      taskId,
      cancelled: true,
      via: 'rows',
      container: { kind: 'none', why: expect.stringContaining('no container recorded yet') },
    });
    expect(await attempts(taskId)).toMatchObject([{ status: 'cancelled', position: null }]);
    expect((await cli('cancel', taskId)).code).toBe(8);
    expect((await cli('retry', taskId)).code).toBe(0);
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

async function until<T>(what: string, read: () => Promise<T>, done: (v: T) => boolean) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** `enqueue --json --key` as the CLI answers it. */
async function enqueueKeyed(user: string, key: string, ...command: string[]) {
  const r = await cli('enqueue', '--json', '--user', user, '--key', key, '--', ...command);
  return { ...r, json: r.code === 0 ? JSON.parse(r.out) : undefined };
}

describe('enqueue --key on the rows', { timeout: COMMANDS_MS }, () => {
  it('names one task: the same key again answers it (replayed), another command is a conflict (8)', async () => {
    const first = await enqueueKeyed('kay', 'deploy-42', 'sleep', '600');
    expect(first.code, first.err).toBe(0);
    expect(first.json).toMatchObject({ replayed: false, via: 'rows' });
    const again = await enqueueKeyed('kay', 'deploy-42', 'sleep', '600');
    expect(again.json).toEqual({ ...first.json, replayed: true });
    const text = await cli('enqueue', '--user', 'kay', '--key', 'deploy-42', '--', 'sleep', '600');
    expect(text.out).toMatch(
      new RegExp(
        `^${first.json.taskId} for kay: submitted before with this key, queued, (next in line|position \\d+ in line) \\(via rows\\)\n$`,
      ),
    );
    const shown = await cli('show', first.json.taskId);
    expect(shown.out.split('\n')[1]).toMatch(/^ {2}user kay, created \S+, key deploy-42$/);
    const other = await enqueueKeyed('kay', 'deploy-42', 'sleep', '1');
    expect(other.code).toBe(8);
    expect(other.err).toContain(first.json.taskId);
    expect((await enqueueKeyed('kay', 'two words', 'true')).code).toBe(2);
  });
});

describe('enqueue --time-limit on the rows', { timeout: COMMANDS_MS }, () => {
  it('stores the limit on the task, shows it, and refuses one without a unit or out of bounds', async () => {
    const r = await cli(
      'enqueue',
      '--json',
      '--user',
      'tim',
      '--time-limit',
      '30m',
      '--',
      'sleep',
      '600',
    );
    expect(r.code, r.err).toBe(0);
    const { taskId } = JSON.parse(r.out) as { taskId: string };
    const shown = await cli('show', taskId);
    expect(shown.out.split('\n')[1]).toMatch(/^ {2}user tim, created \S+, time limit 30m$/);
    // Without the flag, on the rows: the node setting's default (env here), as `start` applies it.
    const c = capture({ ROUNDTABLE_DEFAULT_TIME_LIMIT_MS: '3600000' });
    expect(await runCli(['enqueue', '--data-dir', dir, '--json', '--', 'true'], c.io)).toBe(0);
    const byDefault = JSON.parse(c.out()) as { taskId: string };
    expect((await cli('show', byDefault.taskId)).out.split('\n')[1]).toMatch(/, time limit 1h$/);
    for (const bad of ['30', '500ms', '25d', 'soon']) {
      const refused = await cli('enqueue', '--user', 'tim', '--time-limit', bad, '--', 'true');
      expect(refused.code, bad).toBe(2);
      expect(refused.err).toContain('--time-limit');
    }
  });
});

describe('through a running node', () => {
  it('cancels a running attempt and retries it, with the same answers as the rows', async () => {
    const node = capture();
    const running = runCli(
      [
        'start',
        '--port',
        '0',
        '--backend',
        'simulated',
        '--users',
        'ann,dee,kay',
        '--data-dir',
        dir,
      ],
      node.io,
    );
    let viaNode = '';
    let taskId = '';
    try {
      await ready(node);
      // A key the rows took before the node started names the same task through the node.
      const before = await enqueueKeyed('kay', 'deploy-42', 'sleep', '600');
      expect(before.json).toMatchObject({ replayed: true, via: expect.stringMatching(/^node at/) });
      const changed = await enqueueKeyed('kay', 'deploy-42', 'sleep', '1');
      expect([changed.code, changed.err]).toEqual([8, expect.stringContaining('409 conflict')]);
      taskId = await enqueue('dee', 'sleep', '600');
      await until(
        'the sleep to run',
        () => attempts(taskId),
        (a) => a[0]?.status === 'running',
      );
      const cancelled = await cli('cancel', taskId);
      expect(cancelled.code, cancelled.err).toBe(0);
      expect(cancelled.out).toMatch(new RegExp(`^${taskId}: cancelled \\(via node at http`));
      expect(await attempts(taskId)).toMatchObject([{ status: 'cancelled' }]);
      // The node's 409 and 404 are the rows' 8 and 7.
      expect((await cli('cancel', taskId)).code).toBe(8);
      expect((await cli('cancel', newId('task'))).code).toBe(7);
      expect((await cli('show', newId('task'))).code).toBe(7);

      const retried = await cli('retry', taskId, '--json');
      expect(retried.code, retried.err).toBe(0);
      expect(JSON.parse(retried.out).via).toMatch(/^node at http/);
      await until(
        'the new attempt to run',
        () => attempts(taskId),
        (a) => a[1]?.status === 'running',
      );
      expect((await cli('retry', taskId)).code).toBe(8);
      expect((await cli('cancel', taskId)).code).toBe(0);
      viaNode = (await cli('show', taskId, '--json')).out;
    } finally {
      node.signal('SIGINT');
      expect(await running).toBe(0);
    }
    const detail = JSON.parse(viaNode);
    expect(detail.attempts).toMatchObject([
      { attempt: 1, status: 'cancelled' },
      { attempt: 2, status: 'cancelled' },
    ]);
    // With the node stopped, the rows give the same task.
    const fromRows = await cli('show', taskId, '--json');
    expect(JSON.parse(fromRows.out)).toEqual(detail);
  }, 90_000);
});

/** Whether `pid` is a live process (a zombie waiting for its parent counts as gone). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

describe('a run its node left behind', () => {
  it('cancel through the rows cancels the row, then removes the run the row names', async () => {
    const own = mkdtempSync(join(tmpdir(), 'rt-cli-left-'));
    const cliIn = async (...args: string[]) => {
      const c = capture();
      const code = await runCli([args[0] ?? '', '--data-dir', own, ...args.slice(1)], c.io);
      return { code, out: c.out(), err: c.err() };
    };
    const detail = async (id: string) =>
      JSON.parse((await cliIn('show', id, '--json')).out).attempts as Array<{
        status: string;
        backend: string | null;
        handle: string | null;
      }>;
    let pid = 0;
    let handle = '';
    try {
      const node = capture();
      const running = runCli(
        ['start', '--port', '0', '--backend', 'local', '--users', 'ann', '--data-dir', own],
        node.io,
      );
      let taskId = '';
      try {
        await ready(node);
        const r = await cliIn('enqueue', '--json', '--user', 'ann', '--', 'sleep', '600');
        expect(r.code, r.err).toBe(0);
        taskId = JSON.parse(r.out).taskId;
        await until(
          'the sleep to run with its handle recorded',
          () => detail(taskId),
          (a) => a[0]?.status === 'running' && a[0].handle !== null,
        );
      } finally {
        // A node that stops leaves its local runs going, for the next boot to adopt.
        node.signal('SIGINT');
        expect(await running).toBe(0);
      }
      const [run] = await detail(taskId);
      expect(run).toMatchObject({ status: 'running', backend: 'local' });
      handle = run?.handle ?? '';
      pid = parseLocalHandle(handle)?.pid ?? 0;
      expect(alive(pid)).toBe(true);

      const cancelled = await cliIn('cancel', taskId);
      expect(cancelled.code, cancelled.err).toBe(0);
      expect(cancelled.out).toBe(
        `${taskId}: cancelled (via rows); its container ${run?.handle} (local) is removed\n`,
      );
      expect(alive(pid)).toBe(false);
      expect(await detail(taskId)).toMatchObject([{ status: 'cancelled' }]);
    } finally {
      if (handle !== '') killRunGroup(handle);
      rmSync(own, { recursive: true, force: true });
    }
  }, 90_000);
});
