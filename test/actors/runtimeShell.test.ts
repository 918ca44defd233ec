/**
 * The node's I/O shell over a real store: a submitted write's card shows on
 * the board from the tick's reply, a grant reaches the runtime's hook only
 * while grants may be taken, a dead runtime shows nothing, and a stopped
 * shell takes no more writes. The whole runtime over it is
 * test/actors/runtime.*.test.ts.
 */
import { expect, test, vi } from 'vitest';
import { DispatcherStoppedError } from '../../src/actors/dispatcher.js';
import * as shellModule from '../../src/actors/runtimeShell.js';
import { createShell, type ShellOptions } from '../../src/actors/runtimeShell.js';
import type { ContainerBackend } from '../../src/containers/ContainerBackend.js';
import { type Db, newId, type Session, type Task } from '../../src/db/index.js';
import { TestClock } from '../../src/testing/TestClock.js';
import { describeEachEngine } from '../support/databases.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/actors/runtimeShell.ts', import.meta.url), shellModule);

/** The shell calls its backend only to probe a closed engine gate: never here. */
const noBackend = new Proxy({} as ContainerBackend, {
  get(_, key) {
    throw new Error(`shell used the backend (${String(key)})`);
  },
});

function shellOver(
  db: Db,
  over: Partial<Omit<ShellOptions, 'o'>> = {},
  caps = { maxRunning: 1, defaultUserCap: 1 },
) {
  const granted: Array<{ session: Session; task: Task }> = [];
  const errors: unknown[] = [];
  const shell = createShell({
    o: {
      db,
      backend: noBackend,
      clock: new TestClock(),
      caps,
      localMax: caps.maxRunning,
      storeDeadlineMs: 10_000,
      commandOutageMs: 5_000,
      dispatchPollMs: 60_000,
      positionPushMs: 0,
      liveOutputMs: null,
    },
    owner: 'n1@b1',
    isTransient: () => false,
    mayGrant: () => true,
    onGranted: (g) => granted.push(g),
    isDead: () => false,
    report: (e) => errors.push(e),
    track: (work) => work,
    ...over,
  });
  return { shell, granted, errors };
}

const enqueue = (userId: string) => ({
  op: 'enqueue' as const,
  taskId: newId('task'),
  sessionId: newId('session'),
  userId,
  title: 'job',
  spec: { image: 'i', command: ['c'] },
});

describeEachEngine('runtime shell', (getDb) => {
  test("a write's card shows from the tick's reply; its grant reaches the hook", async () => {
    const { shell, granted, errors } = shellOver(getDb().db);
    await shell.prime();
    await shell.start();
    const op = enqueue('ann');
    const outcome = await shell.dispatcher.submit(op);
    expect(outcome.kind).toBe('applied');
    await vi.waitFor(() =>
      expect(shell.board.cards('ann').map((c) => c.taskId)).toEqual([op.taskId]),
    );
    expect(granted.map((g) => g.session.id)).toEqual([op.sessionId]);
    expect(shell.dispatcher.holding()).toBe(1);
    shell.stop();
    expect(errors).toEqual([]);
  });

  test('no grant while the runtime may not take one; the write still lands', async () => {
    const { shell, granted } = shellOver(getDb().db, { mayGrant: () => false });
    await shell.prime();
    await shell.start();
    const op = enqueue('ann');
    await shell.dispatcher.submit(op);
    await vi.waitFor(() => expect(shell.board.cards('ann')).toHaveLength(1));
    expect(granted).toEqual([]);
    expect(shell.dispatcher.holding()).toBe(0);
    shell.stop();
  });

  test('a dead runtime shows no card and takes no grant', async () => {
    const { shell, granted } = shellOver(getDb().db, { isDead: () => true });
    await shell.prime();
    await shell.start();
    await shell.dispatcher.submit(enqueue('ann'));
    // Time for a card the reply would have shown to be read and applied.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(shell.board.cards(null)).toEqual([]);
    expect(granted).toEqual([]);
    shell.stop();
  });

  test('prime reads the lines as they are: the pool counts what the rows hold', async () => {
    const first = shellOver(getDb().db);
    await first.shell.prime();
    await first.shell.start();
    await first.shell.dispatcher.submit(enqueue('ann'));
    await first.shell.dispatcher.submit(enqueue('ann'));
    first.shell.stop();
    const { shell } = shellOver(getDb().db, { mayGrant: () => false });
    await shell.prime();
    const pool = shell.lines.snapshot(1);
    expect([pool.running, pool.queued]).toEqual([1, 1]);
    shell.stop();
  });

  test("a tick sent as the last one's reply lands says it saw that one: no reply brings this node's own changes back", async () => {
    // The reply of every rt_tick, as the store sent it.
    const replies: Array<{ tick: number; changes: unknown }> = [];
    let sent = 0;
    const db = getDb().db.withPlugin({
      transformQuery: (args) => {
        if (JSON.stringify(args.node).includes('rt_tick')) sent += 1;
        return args.node;
      },
      transformResult: async (args) => {
        for (const row of args.result.rows as Array<{ r?: { tick: number; changes: unknown } }>)
          if (row.r !== undefined && typeof row.r.tick === 'number') replies.push(row.r);
        return args.result;
      },
    });
    const { shell, errors } = shellOver(db, {}, { maxRunning: 3, defaultUserCap: 1 });
    await shell.prime();
    await shell.start();
    const first = shell.dispatcher.submit(enqueue('ann'));
    // Once the first tick is out, these wait for its reply and leave in
    // the next tick, sent before that reply is handed on.
    await vi.waitFor(() => expect(sent).toBe(1), { interval: 0 });
    const later = [shell.dispatcher.submit(enqueue('bob')), shell.dispatcher.submit(enqueue('cy'))];
    await Promise.all([first, ...later]);
    await vi.waitFor(() => expect(shell.dispatcher.holding()).toBe(3));
    expect(replies.length).toBeGreaterThanOrEqual(2);
    // Only this node ticked: no reply has another node's changes to bring.
    expect(replies.filter((r) => r.changes !== null && r.changes !== undefined)).toEqual([]);
    shell.stop();
    expect(errors).toEqual([]);
  });

  test('a stopped shell takes no more writes', async () => {
    const { shell } = shellOver(getDb().db);
    await shell.prime();
    await shell.start();
    shell.stop();
    await expect(shell.dispatcher.submit(enqueue('ann'))).rejects.toBeInstanceOf(
      DispatcherStoppedError,
    );
  });
});

describeEachEngine('runtime shell, two nodes on one store', (getDb) => {
  test("another node's finished run shows its stored output from the feed's read alone", async () => {
    const { db } = getDb();
    // Counts the board's own reads of stored outputs (the feed's read is one raw statement).
    let outputReads = 0;
    const watched = db.withPlugin({
      transformQuery(args) {
        if (
          args.node.kind === 'SelectQueryNode' &&
          JSON.stringify(args.node).includes('"session_outputs"')
        )
          outputReads += 1;
        return args.node;
      },
      transformResult: async (args) => args.result,
    });
    const a = shellOver(db, { owner: 'n1@b1' });
    const b = shellOver(watched, { owner: 'n2@b1', mayGrant: () => false });
    for (const n of [a, b]) {
      await n.shell.prime();
      await n.shell.start();
    }
    const op = enqueue('ann');
    await a.shell.dispatcher.submit(op);
    await vi.waitFor(() => expect(a.granted).toHaveLength(1));
    const run = a.granted[0]!.session;
    await a.shell.dispatcher.submit({
      op: 'finish',
      sessionId: run.id,
      epoch: run.epoch,
      status: 'succeeded',
      exitCode: 0,
      reason: null,
      userRecoverable: false,
      output: { text: 'one\ntwo\n', totalBytes: 8, truncated: false },
      column: 'done',
      requeue: null,
    });
    // B's next tick finds A's ticks in between and reads them (no NOTIFY here).
    await b.shell.dispatcher.submit(enqueue('bob'));
    await vi.waitFor(() => {
      const card = b.shell.board.cards('ann')[0];
      expect(card?.status).toBe('succeeded');
      expect(card?.lastOutput).toEqual(['one', 'two']);
    });
    expect(outputReads).toBe(0);
    for (const n of [a, b]) n.shell.stop();
    expect([...a.errors, ...b.errors]).toEqual([]);
  });
});
