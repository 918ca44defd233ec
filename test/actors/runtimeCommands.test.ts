/**
 * The commands over fakes: which op each submits, what it checks first, and
 * how every failure reaches the caller (test/actors/runtime.scenarios.test.ts
 * runs them through a whole runtime).
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { DispatcherStoppedError, DispatchUnavailableError } from '../../src/actors/dispatcher.js';
import type { CommandOp, RuntimeCommandsOptions } from '../../src/actors/runtimeCommands.js';
import * as commands from '../../src/actors/runtimeCommands.js';
import { RuntimeStoppedError } from '../../src/actors/runtimeExit.js';
import { NotFoundError, type Session, ValidationError } from '../../src/db/index.js';
import type { TickOutcome } from '../../src/db/tickTypes.js';
import { ReconcilerStoppedError } from '../../src/machines/reconcileLoop.js';
import { runningRows } from '../support/boardRuns.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/actors/runtimeCommands.ts', import.meta.url), commands);

const { task, session: running } = runningRows(1);

/** Commands over fakes; `outcome` answers every op, and every op and side effect is logged. */
function setup(
  over: Partial<RuntimeCommandsOptions> & { outcome?: TickOutcome; sessions?: Session[] } = {},
) {
  const ops: CommandOp[] = [];
  const log: string[] = [];
  const applied: TickOutcome = over.outcome ?? {
    ref: '1',
    kind: 'applied',
    session: running,
    task,
    position: 3,
  };
  const c = commands.runtimeCommands({
    submit: async (op) => {
      ops.push(op);
      return applied;
    },
    readTask: async () => task,
    readSessions: async () => over.sessions ?? [running],
    cancelRunner: (id) => {
      log.push(`tell ${id}`);
      return false;
    },
    removeRun: async (run) => {
      log.push(`remove ${run.handle}`);
    },
    requestPass: () => Promise.resolve(),
    isDead: () => false,
    ending: () => undefined,
    onError: (e) => log.push(`error ${String(e)}`),
    ...over,
  });
  return { c, ops, log };
}

describe('submit and createTask', () => {
  test('one enqueue op; the position is the tick answer', async () => {
    const { c, ops } = setup();
    await expect(
      c.createTask('alice', { title: 't', image: 'i', command: ['c'] }),
    ).resolves.toEqual({
      taskId: task.id,
      sessionId: running.id,
      position: 3,
      replayed: false,
    });
    expect(ops).toMatchObject([
      { op: 'enqueue', userId: 'alice', title: 't', spec: { image: 'i', command: ['c'] } },
    ]);
    expect(ops[0]).not.toHaveProperty('spec.env');
    expect(ops[0]).not.toHaveProperty('key');
  });

  test('a key rides the op; a replay says so; a key in use is a conflict naming the task', async () => {
    const replay = setup({
      outcome: { ref: '1', kind: 'applied', session: running, task, position: 0, replayed: true },
    });
    await expect(
      replay.c.createTask('alice', { title: 't', image: 'i', command: ['c'], key: 'k-1' }),
    ).resolves.toEqual({ taskId: task.id, sessionId: running.id, position: 0, replayed: true });
    expect(replay.ops).toMatchObject([{ op: 'enqueue', key: 'k-1' }]);
    const taken = setup({
      outcome: {
        ref: '1',
        kind: 'stale',
        actual: { status: 'key in use by tsk_0123', epoch: 0 },
      },
    });
    await expect(
      taken.c.submit('alice', { title: 't', image: 'i', command: ['c'], key: 'k-1' }),
    ).rejects.toMatchObject({ code: 'conflict', message: expect.stringContaining('tsk_0123') });
  });

  test('each answered submission is counted by outcome', async () => {
    const counted: string[] = [];
    const onSubmitted = (outcome: string) => counted.push(outcome);
    const input = { title: 't', image: 'i', command: ['c'], key: 'k' };
    await setup({ onSubmitted }).c.submit('alice', input);
    const replayed = { ref: '1', kind: 'applied', session: running, task, position: 0 } as const;
    await setup({ onSubmitted, outcome: { ...replayed, replayed: true } }).c.submit('alice', input);
    const stale = { ref: '1', kind: 'stale', actual: { status: 'key in use by tsk_9', epoch: 0 } };
    await setup({ onSubmitted, outcome: stale as TickOutcome })
      .c.submit('alice', input)
      .catch(() => {});
    await setup({ onSubmitted, submit: () => Promise.reject(new Error('ECONNRESET')) })
      .c.submit('alice', input)
      .catch(() => {});
    expect(counted).toEqual(['queued', 'replayed', 'conflict']);
  });

  test('a tick with no task is unavailable', async () => {
    const { c } = setup({
      outcome: { ref: '1', kind: 'applied', session: running, task: null, position: 0 },
    });
    await expect(
      c.submit('alice', { title: 't', image: 'i', command: ['c'] }),
    ).rejects.toMatchObject({
      code: 'unavailable',
    });
  });

  test('a write the runtime stopped before it ran rejects as stopped; a bad one as invalid', async () => {
    // stop() or kill() came after the submit was called, before its tick.
    let ending: 'stop' | 'kill' | undefined;
    const endsWith = (how: 'stop' | 'kill', sent: boolean) => () => {
      ending = how;
      return Promise.reject(new DispatcherStoppedError(sent));
    };
    const input = { title: 't', image: 'i', command: ['c'] };
    const stopped = setup({ submit: endsWith('stop', false), ending: () => ending });
    const err = await stopped.c.submit('a', input).catch((e) => e);
    expect(err).toBeInstanceOf(RuntimeStoppedError);
    expect([err.exit, err.applied, err.message]).toEqual([
      { kind: 'stopped' },
      'no',
      'the runtime is stopped: enqueue was not applied',
    ]);
    ending = undefined;
    const killed = setup({ submit: endsWith('kill', true), ending: () => ending });
    const lost = await killed.c.submit('a', input).catch((e) => e);
    expect([lost.exit, lost.applied]).toEqual([{ kind: 'killed' }, 'maybe']);
    // Called after stop(): the same error, and nothing is sent.
    const after = setup({ ending: () => 'stop' });
    const refused = await after.c.submit('a', input).catch((e) => e);
    expect([refused.constructor, refused.applied]).toEqual([RuntimeStoppedError, 'no']);
    expect(after.ops).toEqual([]);
    // The node gave up (no stop() or kill() asked): unavailable, as before.
    ending = undefined;
    const gaveUp = setup({ submit: () => Promise.reject(new DispatcherStoppedError()) });
    await expect(gaveUp.c.submit('a', input)).rejects.toMatchObject({ code: 'unavailable' });
    const bad = setup({ submit: () => Promise.reject(new ValidationError('title', 'too long')) });
    await expect(
      bad.c.submit('a', { title: 't', image: 'i', command: ['c'] }),
    ).rejects.toMatchObject({
      code: 'invalid',
      message: 'invalid title: too long',
    });
  });

  test('a field the tick refused is named as the caller sent it, not as ops.<n> of the batch', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.nat(1_000),
        fc.constantFrom('userId', 'maxRunning', 'title'),
        fc.string({ minLength: 1 }),
        async (index, field, problem) => {
          const refused = () =>
            Promise.reject(new ValidationError(`ops.${index}.${field}`, problem));
          const { c } = setup({ submit: refused });
          const message = `invalid ${field}: ${problem}`;
          await expect(
            c.submit('a', { title: 't', image: 'i', command: ['c'] }),
          ).rejects.toMatchObject({ code: 'invalid', message });
          await expect(c.setUserCap('a', 1)).rejects.toMatchObject({ code: 'invalid', message });
        },
      ),
      { numRuns: 50 },
    );
  });

  test('a bad submission is refused before any op, naming the field as the caller sent it', async () => {
    const { c, ops } = setup();
    const base = { title: 't', image: 'node:20', command: ['true'] };
    for (const [input, message] of [
      [
        { ...base, env: { '1A': 'x' } },
        'invalid env.1A: not an environment variable name ([A-Za-z_][A-Za-z0-9_]*)',
      ],
      [
        { ...base, env: { A: 'x\ud800' } },
        'invalid env.A: lone UTF-16 surrogate: not well-formed Unicode',
      ],
      [{ ...base, command: ['true', 'a\0b'] }, 'invalid command.1: NUL byte in argument'],
      [{ ...base, title: ' ' }, 'invalid title: blank'],
      [{ ...base, image: 'a b' }, 'invalid image: image reference: no spaces or shell characters'],
      [{ ...base, timeLimitMs: 5 }, 'invalid timeLimitMs: at least 1000 ms'],
    ] as const) {
      await expect(c.submit('a', input), message).rejects.toMatchObject({
        code: 'invalid',
        message,
      });
    }
    expect(ops).toEqual([]);
  });

  test('a stopped runtime takes no command', async () => {
    const { c, ops } = setup({ isDead: () => true });
    await expect(c.setUserCap('alice', 1)).rejects.toMatchObject({ code: 'unavailable' });
    expect(() => c.reconcile()).toThrow('the runtime is stopped');
    expect(ops).toEqual([]);
  });
});

describe('cancel', () => {
  test('the row first, at the epoch read; then the container when no runner here cleans up', async () => {
    const { c, ops, log } = setup({ sessions: [{ ...running, handle: 'svc_1' }] });
    await c.cancel('alice', task.id);
    expect(ops).toEqual([
      {
        op: 'cancel',
        sessionId: running.id,
        expected: { status: 'running', epoch: 1 },
        reason: 'cancelled by user',
        column: 'failed',
      },
    ]);
    expect(log).toEqual([`tell ${running.id}`, 'remove svc_1']);
  });

  test('by the admin, with a runner here: it is told and nothing else is removed', async () => {
    const { c, ops, log } = setup({
      sessions: [{ ...running, handle: 'svc_1' }],
      cancelRunner: () => true,
    });
    await c.cancel(null, task.id);
    expect(ops[0]).toMatchObject({ reason: 'cancelled by admin' });
    expect(log).toEqual([]);
  });

  test('a finished task is a conflict; a stale write too', async () => {
    const done = setup({ sessions: [{ ...running, status: 'succeeded' }] });
    await expect(done.c.cancel('alice', task.id)).rejects.toMatchObject({ code: 'conflict' });
    expect(done.ops).toEqual([]);
    const stale = setup({
      outcome: { ref: '1', kind: 'stale', actual: { status: 'failed', epoch: 2 } },
    });
    await expect(stale.c.cancel('alice', task.id)).rejects.toMatchObject({
      code: 'conflict',
      message: `task ${task.id} moved on (now failed); try again`,
    });
  });

  test('a grant between the read and the tick: the cancel follows the row, still live', async () => {
    // Read queued; another node's tick granted it before this cancel's tick.
    const queued: Session = { ...running, status: 'queued', epoch: 0, handle: null };
    const ops: CommandOp[] = [];
    const answers: TickOutcome[] = [
      { ref: '1', kind: 'stale', actual: { status: 'running', epoch: 1 } },
      {
        ref: '2',
        kind: 'applied',
        session: { ...running, status: 'cancelled' },
        task,
        position: null,
      },
    ];
    const { c, log } = setup({
      sessions: [queued],
      submit: async (op) => {
        ops.push(op);
        const answer = answers.shift();
        if (answer === undefined) throw new Error('no more answers');
        return answer;
      },
    });
    await c.cancel('alice', task.id);
    expect(ops.map((op) => (op.op === 'cancel' ? op.expected : null))).toEqual([
      { status: 'queued', epoch: 0 },
      { status: 'running', epoch: 1 },
    ]);
    expect(log).toEqual([`tell ${running.id}`]);
  });

  test('a cancel follows a live row at most CANCEL_FOLLOWS times, then is a conflict', async () => {
    const stale = setup({
      outcome: { ref: '1', kind: 'stale', actual: { status: 'running', epoch: 7 } },
    });
    await expect(stale.c.cancel('alice', task.id)).rejects.toMatchObject({ code: 'conflict' });
    expect(stale.ops).toHaveLength(commands.CANCEL_FOLLOWS + 1);
  });

  test("another user's task, a malformed id and a task with no session are not found", async () => {
    const hidden = setup({ readTask: () => Promise.reject(new NotFoundError('task', task.id)) });
    await expect(hidden.c.cancel('bob', task.id)).rejects.toMatchObject({ code: 'not_found' });
    const malformed = setup({
      readTask: () => Promise.reject(new ValidationError('taskId', 'bad')),
    });
    await expect(malformed.c.cancel('bob', 'x')).rejects.toMatchObject({
      code: 'not_found',
      message: 'task x not found',
    });
    const none = setup({ sessions: [] });
    await expect(none.c.cancel('alice', task.id)).rejects.toMatchObject({ code: 'not_found' });
  });

  test('a failed removal is reported, not thrown', async () => {
    const { c, log } = setup({
      sessions: [{ ...running, handle: 'svc_1' }],
      removeRun: () => Promise.reject(new Error('engine down')),
    });
    await c.cancel('alice', task.id);
    expect(log).toContain('error Error: engine down');
  });
});

describe('retry', () => {
  test('a retry op on the latest attempt as read; the new attempt and its place', async () => {
    const failed = { ...running, status: 'failed' as const, epoch: 4 };
    const { c, ops } = setup({ sessions: [running, failed] });
    await expect(c.retry(null, task.id)).resolves.toEqual({ sessionId: running.id, position: 3 });
    expect(ops).toMatchObject([
      {
        op: 'retry',
        taskId: task.id,
        actor: null,
        expected: { sessionId: running.id, status: 'failed', epoch: 4 },
      },
    ]);
  });

  test.each(['queued', 'running', 'succeeded'] as const)(
    'a %s task is a conflict that says so, and nothing is submitted',
    async (status) => {
      const { c, ops } = setup({ sessions: [{ ...running, status }] });
      await expect(c.retry('alice', task.id)).rejects.toMatchObject({
        code: 'conflict',
        message: `task ${task.id} is ${status}: only a failed or cancelled task is retried`,
      });
      expect(ops).toEqual([]);
    },
  );
});

describe('a store failure that is not an outage', () => {
  const submitFailing = async (error: unknown) => {
    const { c } = setup({ submit: () => Promise.reject(error) });
    return c.submit('alice', { title: 't', image: 'i', command: ['c'] }).catch((e) => e);
  };

  test('a value the server refused (SQLSTATE class 22) is invalid, with the error as cause', async () => {
    const refused = Object.assign(
      new Error(
        'invalid input syntax for type json: Unicode low surrogate must follow a high surrogate',
      ),
      { code: '22P02' },
    );
    const err = await submitFailing(refused);
    expect(err).toMatchObject({ code: 'invalid' });
    expect(err.message).toMatch(/surrogate/);
    expect(err.cause).toBe(refused);
  });

  test('a bug (a syntax error, a constraint, an error with no code) is internal, not unavailable', async () => {
    for (const error of [
      Object.assign(new Error('syntax error'), { code: '42601' }),
      Object.assign(new Error('duplicate key'), { code: '23505' }),
      new Error('rt_tick answered no outcome for op enqueue #1'),
    ]) {
      const err = await submitFailing(error);
      expect(err, error.message).toMatchObject({ code: 'internal' });
      expect(err.cause).toBe(error);
    }
  });

  test("an outage or an op past its deadline is unavailable, in the dispatcher's words when it gave up", async () => {
    const late = 'the store did not answer for 60000 ms: enqueue was not applied';
    for (const [error, message] of [
      [
        Object.assign(new Error('terminating connection'), { code: '57P01' }),
        'the store did not answer',
      ],
      [new DispatchUnavailableError(late), late],
    ] as const) {
      await expect(submitFailing(error)).resolves.toMatchObject({ code: 'unavailable', message });
    }
  });
});

test('setUserCap: a cap outcome is the answer; a store that does not answer is unavailable', async () => {
  const ok = setup({ outcome: { ref: '1', kind: 'cap', line: {} as never } });
  await expect(ok.c.setUserCap('alice', 2)).resolves.toBeUndefined();
  expect(ok.ops).toEqual([{ op: 'cap', userId: 'alice', maxRunning: 2 }]);
  const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
  const down = setup({ submit: () => Promise.reject(refused) });
  const err = await down.c.setUserCap('alice', 2).catch((e) => e);
  expect(err).toMatchObject({ code: 'unavailable' });
  expect(err.cause).toBe(refused);
});

test('an outage is what the runtime’s isTransient says it is, else internal', async () => {
  const odd = Object.assign(new Error('the proxy said no'), { code: 'X0001' });
  const judged = setup({
    submit: () => Promise.reject(odd),
    isTransient: (e) => (e as { code?: string }).code === 'X0001',
  });
  await expect(judged.c.setUserCap('alice', 2)).rejects.toMatchObject({ code: 'unavailable' });
  const plain = setup({ submit: () => Promise.reject(odd) });
  await expect(plain.c.setUserCap('alice', 2)).rejects.toMatchObject({ code: 'internal' });
});

describe('reconcile', () => {
  test('no reconciler running is unavailable', async () => {
    const { c } = setup({ requestPass: () => undefined });
    await expect(c.reconcile()).rejects.toMatchObject({ code: 'unavailable' });
  });

  test('a reconciler that stops because the runtime ends rejects as the ending says', async () => {
    // kill() comes while the pass runs: the reconcile was asked before it.
    let ending: 'kill' | undefined;
    const gone = () => {
      ending = 'kill';
      return Promise.reject(new ReconcilerStoppedError('gone'));
    };
    const killed = setup({ requestPass: gone, ending: () => ending });
    const err = await killed.c.reconcile().catch((e) => e);
    expect(err).toBeInstanceOf(RuntimeStoppedError);
    expect(err.exit).toEqual({ kind: 'killed' });
    // Not ending: the reconciler's own error is the answer.
    const crashed = setup({ requestPass: gone });
    await expect(crashed.c.reconcile()).rejects.toBeInstanceOf(ReconcilerStoppedError);
  });
});
