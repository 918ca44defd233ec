import { PGlite } from '@electric-sql/pglite';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  createTestRuntime,
  HarnessClosedError,
  HarnessSettleError,
  type TestRuntime,
} from '../../src/testing/index.js';

let pglite: PGlite;
beforeAll(async () => {
  pglite = await PGlite.create('memory://');
}, 30_000);
afterAll(async () => {
  await pglite.close();
});

const agent = (seconds: number) => ({
  title: 'fix it',
  image: 'runner:v1',
  command: ['agent', String(seconds)],
});

describe('createTestRuntime', () => {
  let h: TestRuntime;
  test('a task runs to completion and its card shows the output', async () => {
    h = await createTestRuntime({ pglite });
    const { taskId, sessionId, position } = await h.runtime.createTask('alice', agent(30));
    expect(position).toBe(0); // the pool granted it at once
    await h.settle();
    const running = h.board().find((c) => c.taskId === taskId);
    expect(running?.status).toBe('running');
    await h.advance(31_000);
    const [s] = await h.sessions();
    expect(s).toMatchObject({ id: sessionId, status: 'succeeded', exitCode: 0 });
    const card = h.board().find((c) => c.taskId === taskId);
    expect(card?.column).toBe('done');
    expect(card?.lastOutput.at(-1)).toBe('[agent] done');
    expect(h.execLog(sessionId)).toHaveLength(1);
    expect(h.errors).toEqual([]);
    await h.close();
  });

  test('lists rows of one virtual instant in submission order, not by random id', async () => {
    const titles = ['first', 'second', 'third', 'fourth'];
    const seen = new Set<string>();
    for (let round = 0; round < 4; round += 1) {
      h = await createTestRuntime({ pglite, caps: { maxRunning: 4, defaultUserCap: 1 } });
      for (const title of titles) await h.runtime.createTask('alice', { ...agent(30), title });
      const byId = new Map((await h.tasks()).map((t) => [t.id, t.title]));
      expect([...byId.values()]).toEqual(titles);
      seen.add((await h.sessions()).map((s) => byId.get(s.taskId)).join());
      await h.close();
    }
    // Four rounds of four random ids each: an order by id passes all four 1 in 24^3.
    expect([...seen]).toEqual([titles.join()]);
  });

  test('a settle that never comes is a HarnessSettleError with a code', async () => {
    h = await createTestRuntime({ pglite, settleTimeoutMs: 100 });
    // An engine call that never answers, virtual time or not.
    h.cluster.api.listServices = () => new Promise<never>(() => {});
    void h.runtime.reconcile().catch(() => {});
    const error = await h.settle().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HarnessSettleError);
    expect(error).toMatchObject({ code: 'HARNESS_NOT_SETTLED', inFlight: 1 });
    h.runtime.kill();
  });

  test('advance() moves virtual time through an engine stalled by hangApi', async () => {
    // A short real-time settle deadline: waiting it out is what failed before.
    h = await createTestRuntime({ pglite, settleTimeoutMs: 2_000 });
    h.cluster.hangApi(10_000);
    const { taskId } = await h.runtime.createTask('alice', agent(30));
    const began = Date.now();
    await h.advance(20_000);
    expect(Date.now() - began).toBeLessThan(2_000);
    expect(h.cluster.stalledCalls()).toBe(0);
    await h.advance(60_000);
    expect(h.board().find((c) => c.taskId === taskId)?.column).toBe('done');
    await h.close();
  });

  test('close() is idempotent, and a deploy after it is a HarnessClosedError', async () => {
    // Its own PGlite, which close() closes: the second close used to reject on it.
    h = await createTestRuntime();
    await h.close();
    await expect(h.close()).resolves.toBeUndefined();
    await expect(h.deploy()).rejects.toBeInstanceOf(HarnessClosedError);
    await expect(h.deploy()).rejects.toMatchObject({ code: 'HARNESS_CLOSED' });
  }, 60_000);

  test('close() returns once the killed node has no statement in flight', async () => {
    h = await createTestRuntime({ pglite });
    const answer = h.runtime.createTask('alice', agent(30)).catch((e: unknown) => e);
    await new Promise<void>((resolve) => setImmediate(resolve));
    const runtime = h.runtime;
    expect(runtime.busy()).toBeGreaterThan(0);
    await h.close();
    expect(runtime.busy()).toBe(0);
    await answer;
  });
});

describe('createTestRuntime: calls a test makes in the wrong order', () => {
  test('advances not awaited one by one still move the clock by their sum, in call order', async () => {
    const h = await createTestRuntime({ pglite });
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.integer({ min: 0, max: 20_000 }), { maxLength: 4 }),
          async (steps) => {
            const start = h.clock.now();
            const seen: number[] = [];
            await Promise.all(
              steps.map((ms) => h.advance(ms).then(() => seen.push(h.clock.now() - start))),
            );
            const sum = steps.reduce((a, b) => a + b, 0);
            expect(h.clock.now() - start).toBe(sum);
            // each resolves at its own prefix sum, in the order it was called
            expect(seen).toEqual(
              steps.map((_, i) => steps.slice(0, i + 1).reduce((a, b) => a + b, 0)),
            );
          },
        ),
        { numRuns: 15 },
      );
    } finally {
      await h.close();
    }
  });

  test('advance, sessions, tasks and events after close() are a HarnessClosedError', async () => {
    const h = await createTestRuntime({ pglite });
    const { sessionId } = await h.runtime.createTask('alice', agent(30));
    await h.close();
    const before = h.clock.now();
    for (const call of [
      () => h.advance(1_000),
      () => h.sessions(),
      () => h.tasks(),
      () => h.events(sessionId),
    ]) {
      await expect(call()).rejects.toMatchObject({
        name: 'HarnessClosedError',
        code: 'HARNESS_CLOSED',
      });
    }
    expect(h.clock.now()).toBe(before);
  });

  test('advance(NaN) or a negative advance is a HarnessArgumentError and leaves the clock alone', async () => {
    // advance(NaN) once made the virtual clock NaN for the rest of the test.
    const h = await createTestRuntime({ pglite });
    try {
      const { sessionId } = await h.runtime.createTask('alice', agent(30));
      const before = h.clock.now();
      for (const ms of [Number.NaN, -1, Number.POSITIVE_INFINITY]) {
        await expect(h.advance(ms)).rejects.toMatchObject({
          name: 'HarnessArgumentError',
          code: 'HARNESS_INVALID_ARGUMENT',
          field: 'advance.ms',
        });
        expect(h.clock.now()).toBe(before);
      }
      await h.advance(31_000); // the harness still works
      expect((await h.sessions()).find((s) => s.id === sessionId)?.status).toBe('succeeded');
    } finally {
      await h.close();
    }
  });

  test('a misspelt or unusable option is a HarnessArgumentError naming it, before anything opens', async () => {
    // { pollMS } was silently ignored: the poll stayed at its default.
    await expect(createTestRuntime({ pglite, pollMS: 1_000 } as never)).rejects.toMatchObject({
      name: 'HarnessArgumentError',
      code: 'HARNESS_INVALID_ARGUMENT',
      field: 'pollMS',
      message: 'harness: pollMS is not an option of createTestRuntime; did you mean pollMs?',
    });
    // No node at all: every container would wait, pending, for ever.
    await expect(createTestRuntime({ pglite, nodes: [] })).rejects.toMatchObject({
      code: 'HARNESS_INVALID_ARGUMENT',
      field: 'nodes',
    });
    // A key given as undefined is left out, as createRuntime's are.
    const h = await createTestRuntime({ pglite, settleTimeoutMs: undefined, pollMs: undefined });
    await h.close();
  });

  test('board() lists the cards of one virtual instant in submission order, as tasks() does', async () => {
    // The board breaks ties by random id, and in virtual time every task of
    // an instant ties: board() listed six such tasks in a new order each run.
    const h = await createTestRuntime({ pglite, caps: { maxRunning: 1, defaultUserCap: 1 } });
    try {
      const titles = ['a', 'b', 'c', 'd', 'e', 'f'];
      for (const title of titles) await h.runtime.createTask('ann', { ...agent(60), title });
      await h.advance(1_000);
      expect(h.board().map((c) => c.title)).toEqual(titles);
      expect((await h.tasks()).map((t) => t.title)).toEqual(titles);
      await h.deploy(); // the new boot's board, loaded from the rows
      expect(h.board().map((c) => c.title)).toEqual(titles);
    } finally {
      await h.close();
    }
  });

  test('execLog(taskId) is a HarnessArgumentError, not an empty log', async () => {
    // It returned [], so `expect(h.execLog(taskId).length).toBeLessThanOrEqual(1)`
    // ("never ran twice") passed without looking at any run.
    const h = await createTestRuntime({ pglite });
    try {
      const { taskId, sessionId } = await h.runtime.createTask('alice', agent(30));
      await h.advance(1_000);
      expect(() => h.execLog(taskId)).toThrow(
        expect.objectContaining({ code: 'HARNESS_INVALID_ARGUMENT', field: 'execLog.sessionId' }),
      );
      expect(h.execLog(sessionId)).toHaveLength(1);
      expect(h.execLog()).toHaveLength(1);
    } finally {
      await h.close();
    }
  });

  test('a deploy whose turn comes after close() boots nothing', async () => {
    const h = await createTestRuntime({ pglite });
    const advancing = h.advance(5_000);
    const deploying = h.deploy().catch((e: unknown) => e);
    await h.close();
    await advancing;
    expect(await deploying).toBeInstanceOf(HarnessClosedError);
    expect(h.boots).toBe(1);
  });
});
