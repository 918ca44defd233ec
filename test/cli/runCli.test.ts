/**
 * The CLI in-process, with its I/O captured: help, usage and config errors
 * with their exit codes, and migrate / enqueue / status / start on a
 * temporary PGlite directory (one per file: initdb takes seconds).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/commands.js';
import { runCli } from '../../src/cli/runCli.js';
import { MIGRATIONS } from '../../src/db/index.js';
import { type Captured, capture } from './cliCapture.js';

const VERSIONS = MIGRATIONS.map((m) => m.version);
const LATEST = VERSIONS.at(-1);

/** Waits for a starting node's `ready` log record and returns it. */
async function readyRecord(node: Captured, deadline: number) {
  while (!node.out().includes('"msg":"ready"')) {
    if (Date.now() > deadline) throw new Error(`no ready record: ${node.err()} ${node.out()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return node
    .out()
    .split('\n')
    .map((l) => (l ? JSON.parse(l) : {}))
    .find((r) => r.msg === 'ready');
}

/**
 * The one failure record a command wrote under JSON logs (on stdout for
 * `start` and `demo`, where their logs go, on stderr for the rest): every
 * line either stream holds must be JSON.
 */
function failureOf(c: Captured): Record<string, unknown> & { msg: string } {
  const lines = `${c.out()}\n${c.err()}`.split('\n').filter((l) => l !== '');
  const records = lines.map((l) => {
    try {
      return JSON.parse(l) as Record<string, unknown>;
    } catch {
      throw new Error(`a line of text under JSON logs: ${l}`);
    }
  });
  const failures = records.filter((r) => 'exitCode' in r);
  expect(failures).toHaveLength(1);
  return failures[0] as Record<string, unknown> & { msg: string };
}

describe('help and usage', () => {
  it('prints the general help with every command', async () => {
    const c = capture();
    expect(await runCli([], c.io)).toBe(0);
    for (const command of COMMANDS) expect(c.out()).toContain(command.name);
  });

  it.each(COMMANDS.map((c) => c.name))('%s --help lists its flags and exit codes', async (name) => {
    const c = capture();
    expect(await runCli([name, '--help'], c.io)).toBe(0);
    expect(c.out()).toContain(`roundtable ${name}`);
    expect(c.out()).toContain('--config <file>');
    expect(c.out()).toContain('Exit codes');
    const again = capture();
    expect(await runCli(['help', name], again.io)).toBe(0);
    expect(again.out()).toBe(c.out());
  });

  it('suggests the command meant, exit 2', async () => {
    const c = capture();
    expect(await runCli(['migrat'], c.io)).toBe(2);
    expect(failureOf(c).msg).toContain("did you mean 'migrate'?");
  });

  it('suggests the flag meant, exit 2', async () => {
    const c = capture();
    expect(await runCli(['start', '--max-runing', '3'], c.io)).toBe(2);
    expect(failureOf(c).msg).toContain('did you mean --max-running?');
  });

  it('rejects a stray word', async () => {
    const c = capture();
    expect(await runCli(['status', 'now'], c.io)).toBe(2);
    expect(failureOf(c).msg).toContain("unexpected argument 'now'");
  });

  it.each([
    [['enqueue', '--time-limit', '--', 'true'], '--time-limit needs a value'],
    [['enqueue', '--title', '--', 'echo', 'hi'], '--title needs a value'],
  ])('%j: an option with no value before -- is named, exit 2', async (argv, message) => {
    const c = capture();
    expect(await runCli(argv, c.io)).toBe(2);
    expect(failureOf(c).msg).toContain(message);
    expect(failureOf(c).msg).not.toContain('unexpected argument');
  });

  it('names the bad key of a config file and its source', async () => {
    const c = capture({}, { 'rt.json': JSON.stringify({ simulated: { sped: 3 } }) });
    expect(await runCli(['start', '--config', 'rt.json'], c.io)).toBe(2);
    expect(failureOf(c).msg).toContain(
      'config file rt.json: simulated.sped is unknown; did you mean "speed"?',
    );
  });

  it('reads ROUNDTABLE_CONFIG, and says when the file is missing or not JSON', async () => {
    const missing = capture({ ROUNDTABLE_CONFIG: 'nope.json' });
    expect(await runCli(['status'], missing.io)).toBe(2);
    // Named by where the path came from: the variable, not a flag nobody gave.
    expect(failureOf(missing).msg).toContain('ROUNDTABLE_CONFIG: nope.json cannot be read');
    const missingFlag = capture();
    expect(await runCli(['status', '--config', 'nope.json'], missingFlag.io)).toBe(2);
    expect(failureOf(missingFlag).msg).toContain('--config: nope.json cannot be read');
    const broken = capture({}, { 'b.json': '{ port: 1 }' });
    expect(await runCli(['status', '--config', 'b.json'], broken.io)).toBe(2);
    expect(failureOf(broken).msg).toContain('is not JSON');
  });

  it('names the variable that holds a bad value', async () => {
    const c = capture({ ROUNDTABLE_MAX_RUNNING: '-1' });
    expect(await runCli(['start'], c.io)).toBe(2);
    expect(failureOf(c).msg).toMatch(/ROUNDTABLE_MAX_RUNNING: caps\.maxRunning /);
  });

  it('enqueue needs a command after --', async () => {
    const c = capture();
    expect(await runCli(['enqueue', '--user', 'ann'], c.io)).toBe(2);
    expect(failureOf(c).msg).toContain('give the command after --');
  });

  it('under JSON logs a usage or config failure is one record, where the logs go, with its code', async () => {
    // --log-format json on the command line, the environment saying pretty.
    const bogus = capture({ ROUNDTABLE_LOG_FORMAT: 'pretty' });
    expect(await runCli(['start', '--log-format', 'json', '--bogus'], bogus.io)).toBe(2);
    expect(bogus.err()).toBe('');
    expect(failureOf(bogus)).toMatchObject({
      level: 50,
      command: 'start',
      code: 'CLI_USAGE',
      exitCode: 2,
      help: 'roundtable start --help',
      msg: 'unknown option --bogus',
    });
    const file = capture({}, { 'rt.json': '{"caps":{"maxRuning":3}}' });
    expect(await runCli(['start', '--log-format=json', '--config', 'rt.json'], file.io)).toBe(2);
    expect(failureOf(file)).toMatchObject({ command: 'start', code: 'CLI_CONFIG', exitCode: 2 });
    expect(failureOf(file)).not.toHaveProperty('help');
    // Another command: its logs, and so its failure, on stderr.
    const status = capture();
    expect(await runCli(['status', '--bogus'], status.io)).toBe(2);
    expect(status.out()).toBe('');
    expect(failureOf(status)).toMatchObject({ command: 'status', code: 'CLI_USAGE' });
    const unknown = capture();
    expect(await runCli(['stats'], unknown.io)).toBe(2);
    expect(failureOf(unknown)).toMatchObject({ command: 'stats', code: 'CLI_USAGE', exitCode: 2 });
  });

  it('readable logs, or a log format that is itself wrong, keep the line of text', async () => {
    const pretty = capture({ ROUNDTABLE_LOG_FORMAT: 'pretty' });
    expect(await runCli(['start', '--bogus'], pretty.io)).toBe(2);
    expect(pretty.err()).toBe(
      'roundtable start: unknown option --bogus\nsee: roundtable start --help\n',
    );
    const wrong = capture({}, {});
    expect(await runCli(['status', '--log-format', 'xml'], wrong.io)).toBe(2);
    expect(wrong.err()).toMatch(/^roundtable status: .*log\.format/);
  });
});

describe('on a PGlite directory', () => {
  let dir: string;
  const flags = () => ['--data-dir', dir];
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'rt-cli-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('status before anything exists says so without creating a store', async () => {
    const c = capture();
    expect(await runCli(['status', '--json', ...flags()], c.io)).toBe(0);
    expect(JSON.parse(c.out())).toMatchObject({ queued: 0, running: 0, users: [] });
  });

  it('migrate applies the schema once, then has nothing to do', async () => {
    const first = capture();
    expect(await runCli(['migrate', '--json', ...flags()], first.io)).toBe(0);
    expect(JSON.parse(first.out())).toEqual({ applied: VERSIONS, current: LATEST });
    // The logs went to stderr: stdout is the answer.
    expect(first.err()).toContain('"msg":"migrating…"');
    const second = capture();
    expect(await runCli(['migrate', '--json', ...flags()], second.io)).toBe(0);
    expect(JSON.parse(second.out())).toEqual({ applied: [], current: LATEST });
  });

  it("a command's own failure is one record under JSON logs, and text when the config file asks for readable logs", async () => {
    const json = capture();
    expect(await runCli(['show', 'tsk_nothing', ...flags()], json.io)).toBe(7);
    expect(json.out()).toBe('');
    expect(failureOf(json)).toMatchObject({ command: 'show', code: 'CLI_NOT_FOUND', exitCode: 7 });
    // Off a terminal, auto (nothing set) would be JSON; the file says pretty, and it is read by then.
    const pretty = capture({}, { 'rt.json': '{"log":{"format":"pretty"}}' });
    delete pretty.io.env.ROUNDTABLE_LOG_FORMAT;
    expect(
      await runCli(['show', 'tsk_nothing', '--config', 'rt.json', ...flags()], pretty.io),
    ).toBe(7);
    expect(pretty.err()).toContain('roundtable show: no task tsk_nothing');
  });

  it('enqueue writes rows that status counts, and never refuses for room', async () => {
    for (const user of ['ann', 'ann', 'ann', 'bo']) {
      const c = capture();
      const code = await runCli(
        ['enqueue', '--json', '--user', user, '--env', 'A=1', ...flags(), '--', 'echo', 'hi'],
        c.io,
      );
      expect(code, c.err()).toBe(0);
      expect(JSON.parse(c.out())).toMatchObject({ via: 'rows' });
    }
    const s = capture();
    expect(await runCli(['status', '--json', ...flags()], s.io)).toBe(0);
    const report = JSON.parse(s.out());
    expect(report.queued).toBe(4);
    expect(
      report.users.map((u: { userId: string; queued: number }) => [u.userId, u.queued]),
    ).toEqual([
      ['ann', 3],
      ['bo', 1],
    ]);
  });

  it('enqueue reports a bad input as a usage error', async () => {
    const c = capture();
    expect(await runCli(['enqueue', '--user', 'no spaces', ...flags(), '--', 'x'], c.io)).toBe(2);
    const empty = capture();
    expect(await runCli(['enqueue', '--title', '', ...flags(), '--', 'x'], empty.io)).toBe(2);
    expect(empty.err()).toContain('--title must not be empty');
    // The runtime's rules, named by the flag the value came from.
    for (const [args, said] of [
      [['--env', '1A=x', '--', 'x'], '--env 1A: not an environment variable name'],
      [['--title', 'a\tb', '--', 'x'], '--title: control character'],
      [['--', ''], 'the program (the first word after --): empty program name'],
      [['--', 'echo', 'a\0b'], 'argument 1 after the program: NUL byte in argument'],
    ] as const) {
      const bad = capture();
      expect(await runCli(['enqueue', ...flags(), ...args], bad.io), said).toBe(2);
      expect(bad.err()).toContain(said);
    }
  });

  it('enqueue says a place in line in words', async () => {
    const c = capture();
    expect(await runCli(['enqueue', '--user', 'cy', ...flags(), '--', 'echo', 'hi'], c.io)).toBe(0);
    // Rows enqueued by the tests above are ahead of it.
    expect(c.out()).toMatch(/^tsk_\w+ for cy: queued, position \d+ in line \(via rows\)\n$/);
  });

  it('start runs the queue, answers enqueue and status through the node, and stops on one Ctrl-C', async () => {
    const node = capture({ ROUNDTABLE_SIM_SPEED: '50' });
    const running = runCli(['start', '--port', '0', '--users', 'ann,bo', ...flags()], node.io);
    const deadline = Date.now() + 60_000;
    while (!node.out().includes('"msg":"ready"')) {
      if (Date.now() > deadline) throw new Error(`no ready record: ${node.err()} ${node.out()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const ready = node
      .out()
      .split('\n')
      .map((l) => (l ? JSON.parse(l) : {}))
      .find((r) => r.msg === 'ready');
    expect(ready.board).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#token=/);
    expect(Object.keys(ready.users)).toEqual(['ann', 'bo']);

    // A second process must not open the directory; this one may ask the node.
    const other = capture();
    expect(await runCli(['migrate', ...flags()], other.io)).toBe(4);
    const viaNode = capture();
    expect(
      await runCli(
        ['enqueue', '--json', '--user', 'bo', ...flags(), '--', 'echo', 'x'],
        viaNode.io,
      ),
    ).toBe(0);
    expect(JSON.parse(viaNode.out()).via).toMatch(/^node at http/);
    // The same answers as from the rows: a refused input is a usage error, a place is in words.
    const emptyTitle = capture();
    expect(
      await runCli(['enqueue', '--title', '', ...flags(), '--', 'echo', 'x'], emptyTitle.io),
    ).toBe(2);
    const spaced = capture();
    expect(
      await runCli(
        ['enqueue', '--user', 'ann', '--title', 'a\u0007b', ...flags(), '--', 'x'],
        spaced.io,
      ),
    ).toBe(2);
    const words = capture();
    expect(
      await runCli(['enqueue', '--user', 'ann', ...flags(), '--', 'echo', 'y'], words.io),
    ).toBe(0);
    expect(words.out()).toMatch(
      /: (granted a runner at once|queued, next in line|queued, position \d+ in line) \(via node at http/,
    );
    const status = capture();
    expect(await runCli(['status', '--json', ...flags()], status.io)).toBe(0);
    expect(JSON.parse(status.out()).source).toMatch(/^node in process/);

    node.signal('SIGINT');
    node.signal('SIGINT'); // the same press, relayed by npm and tsx: not a second one
    expect(await running).toBe(0);
    expect(node.exits).toEqual([]);
    expect(node.out()).toContain('"msg":"stopped"');
    expect(() => readFileSync(join(dir, 'node.json'))).toThrow();
  }, 90_000);

  it('status answers the same through a running node as from the rows, with a job waiting and some finished', async () => {
    const node = capture({ ROUNDTABLE_SIM_SPEED: '50' });
    // ann and bo must be configured: a user who is not has no token the node takes.
    const running = runCli(['start', '--port', '0', '--users', 'ann,bo', ...flags()], node.io);
    const viaNode = capture();
    try {
      const deadline = Date.now() + 60_000;
      const ready = await readyRecord(node, deadline);
      const admin = String(ready.board).split('#token=')[1];
      // ann is paused (cap 0), so her job waits at the head of the line for good.
      const cap = await fetch(`${ready.url}/api/users/ann/cap`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        body: JSON.stringify({ maxRunning: 0 }),
      });
      expect(cap.status).toBeLessThan(300);
      await cap.body?.cancel();
      for (const user of ['ann', 'bo']) {
        const c = capture();
        expect(
          await runCli(['enqueue', '--user', user, ...flags(), '--', 'echo', 'z'], c.io),
          c.err(),
        ).toBe(0);
      }
      // Wait until everything else has finished: the state is then still.
      for (;;) {
        const s = capture();
        expect(await runCli(['status', '--json', ...flags()], s.io)).toBe(0);
        const r = JSON.parse(s.out());
        const bo = r.users.find((u: { userId: string }) => u.userId === 'bo');
        if (r.running === 0 && r.queued === 1 && bo?.succeeded + bo?.failed >= 1) break;
        if (Date.now() > deadline) throw new Error(`the line did not settle: ${s.out()}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(await runCli(['status', '--json', ...flags()], viaNode.io)).toBe(0);
    } finally {
      node.signal('SIGINT');
      expect(await running).toBe(0);
    }
    const fromRows = capture();
    expect(await runCli(['status', '--json', ...flags()], fromRows.io)).toBe(0);
    const a = JSON.parse(viaNode.out());
    const b = JSON.parse(fromRows.out());
    expect(a.source).toMatch(/^node in process/);
    expect(b.source).toMatch(/^rows of/);
    expect({ ...a, source: '' }).toEqual({ ...b, source: '' });
    expect(a.head).toEqual([expect.objectContaining({ position: 1, userId: 'ann', attempt: 1 })]);
    expect(a.users.find((u: { userId: string }) => u.userId === 'ann')).toMatchObject({ cap: 0 });
    expect(a.users.every((u: { succeeded: unknown }) => typeof u.succeeded === 'number')).toBe(
      true,
    );
  }, 90_000);

  it('a root that gives up is fatal: logged, the store closed, exit 5', async () => {
    const node = capture({ ROUNDTABLE_SIM_SPEED: '50' });
    const running = runCli(['start', '--port', '0', ...flags()], node.io);
    let exitCode: number | undefined;
    void running.then((code) => {
      exitCode = code;
    });
    const ready = await readyRecord(node, Date.now() + 60_000);
    const admin = String(ready.board).split('#token=')[1];
    // The operator's exit button, four times in a row: the root allows 3 restarts in 5 s.
    for (let i = 0; i < 10 && exitCode === undefined; i += 1) {
      try {
        const res = await fetch(`${ready.url}/inspect/api/exit`, {
          method: 'POST',
          headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
          body: JSON.stringify({ path: 'root/runnerPool', reason: 'kill' }),
        });
        await res.body?.cancel();
      } catch {
        break; // the board went down with the tree
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(await running).toBe(5);
    const records = node
      .out()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));
    const fatal = records.find((r) => r.level === 60);
    expect(fatal?.msg).toMatch(/^the root supervisor gave up: more than 3 restarts in 5000 ms/);
    expect(fatal?.exit).toMatchObject({ kind: 'gave_up', lastCrash: { childId: 'runnerPool' } });
    expect(records.at(-1)?.msg).toBe('stopped after a fatal error');
    // The store is closed and the directory released: another process may open it.
    const after = capture();
    expect(await runCli(['migrate', ...flags()], after.io)).toBe(0);
  }, 90_000);

  it('--per-address caps the connections one address holds at the board', async () => {
    const { connect } = await import('node:net');
    const node = capture();
    const running = runCli(['start', '--port', '0', '--per-address', '2', ...flags()], node.io);
    const sockets: import('node:net').Socket[] = [];
    try {
      const ready = await readyRecord(node, Date.now() + 60_000);
      const port = Number(new URL(ready.board).port);
      // Three sockets that send nothing, from 127.0.0.1 (the start's own
      // probe of its routes may still hold a keep-alive one): the cap of 2
      // refuses at least the third, with its code, before reading anything.
      const replies: string[] = [];
      for (let i = 0; i < 3; i++) {
        const s = connect(port, '127.0.0.1');
        sockets.push(s);
        replies.push('');
        s.on('data', (d) => {
          replies[i] += String(d);
        });
        await new Promise((r) => s.once('connect', r));
        await new Promise((r) => setTimeout(r, 100));
      }
      const refused = replies.filter((r) => r.startsWith('HTTP/1.1 429'));
      expect(refused.length).toBeGreaterThanOrEqual(1);
      expect(refused[0]).toContain('too_many_address_connections');
      expect(replies.filter((r) => r === '').length).toBeLessThanOrEqual(2);
    } finally {
      for (const s of sockets) s.destroy();
      node.signal('SIGINT');
    }
    expect(await running).toBe(0);
  }, 90_000);

  it('a port in use fails the start with exit 5 and frees the directory', async () => {
    const { createServer } = await import('node:net');
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    try {
      // Under JSON logs the failure is one record like the others, not a line of text.
      const c = capture();
      expect(await runCli(['start', '--port', String(port), ...flags()], c.io)).toBe(5);
      expect(c.err()).toBe('');
      const records = c
        .out()
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const last = records.at(-1);
      expect(last).toMatchObject({
        level: 60,
        name: 'roundtable',
        command: 'start',
        code: 'CLI_NODE',
        exitCode: 5,
      });
      expect(last?.msg).toContain(`could not listen on 127.0.0.1:${port}`);
      expect(Object.keys(last ?? {})).toEqual(expect.arrayContaining(['time', 'pid', 'hostname']));
      // Readable logs keep the one line on stderr.
      const pretty = capture({ ROUNDTABLE_LOG_FORMAT: 'pretty' });
      expect(await runCli(['start', '--port', String(port), ...flags()], pretty.io)).toBe(5);
      expect(pretty.err()).toContain(
        `roundtable start: the board could not listen on 127.0.0.1:${port}`,
      );
      writeFileSync(join(dir, 'probe'), '');
      const after = capture();
      expect(await runCli(['migrate', ...flags()], after.io)).toBe(0);
    } finally {
      blocker.close();
    }
  }, 90_000);
});
