/**
 * A holder's DOWN over fakes: the slot goes back (runner_lost, re-queued at
 * the head) only when no runner holds it again once the supervisor has
 * handled the exit (test/actors/runtime.poolRestart.test.ts and the
 * scenarios run it in a whole runtime).
 */
import { expect, test } from 'vitest';
import type { CommandOp } from '../../src/actors/runtimeCommands.js';
import { type HolderDownOptions, holderDown } from '../../src/actors/runtimeHolderDown.js';
import type { TickOutcome } from '../../src/db/tickTypes.js';
import { runningRows } from '../support/boardRuns.js';

const { task, session } = runningRows(1);

function setup(over: Partial<HolderDownOptions> & { outcome?: TickOutcome } = {}) {
  const ops: CommandOp[] = [];
  const log: string[] = [];
  const held = new Map([[session.id, 3]]);
  let pending = 0;
  const down = holderDown({
    heldEpoch: (id) => held.get(id),
    drop: (id) => {
      held.delete(id);
      log.push(`drop ${id}`);
    },
    hasRunner: () => false,
    runnersSettled: () => Promise.resolve(),
    submit: async (op) => {
      ops.push(op);
      return over.outcome ?? { ref: '1', kind: 'applied', session, task, position: null };
    },
    removeRun: async (run) => {
      log.push(`remove ${run.handle}`);
    },
    isDead: () => false,
    track: (work) => {
      pending += 1;
      return work.finally(() => {
        pending -= 1;
      });
    },
    onError: (e) => log.push(`error ${String(e)}`),
    ...over,
  });
  const settled = async () => {
    while (pending > 0) await new Promise((resolve) => setTimeout(resolve, 0));
  };
  return { down, ops, log, held, settled };
}

test('no runner holds again: the run fails as runner_lost and is queued again, its container removed', async () => {
  const s = setup({
    outcome: {
      ref: '1',
      kind: 'applied',
      session: { ...session, handle: 'svc_1' },
      task,
      position: null,
    },
  });
  s.down(session.id);
  await s.settled();
  expect(s.ops).toMatchObject([
    {
      op: 'finish',
      sessionId: session.id,
      epoch: 3,
      status: 'failed',
      reason: 'runner_lost',
      userRecoverable: true,
      column: 'queued',
      requeue: { sessionId: expect.stringMatching(/^ses/) },
    },
  ]);
  expect(s.log).toEqual(['remove svc_1']);
});

test('a restarted runner that holds again, a slot not held here, or a later epoch: nothing goes back', async () => {
  const restarted = setup({ hasRunner: () => true });
  restarted.down(session.id);
  await restarted.settled();
  expect(restarted.ops).toEqual([]);

  const notHeld = setup();
  notHeld.down('ses_other');
  await notHeld.settled();
  expect(notHeld.ops).toEqual([]);

  // Held again at a new epoch while the supervisor handled the exit.
  let settle: () => void = () => {};
  const moved = setup({
    runnersSettled: () =>
      new Promise<void>((resolve) => {
        settle = resolve;
      }),
  });
  moved.down(session.id);
  moved.held.set(session.id, 4);
  settle();
  await moved.settled();
  expect(moved.ops).toEqual([]);
});

test('a stopped runtime releases nothing', async () => {
  const s = setup({ isDead: () => true });
  s.down(session.id);
  await s.settled();
  expect(s.ops).toEqual([]);
});

test('a release that does not land stops counting the session here, for the Reconciler to recover', async () => {
  const s = setup({ submit: () => Promise.reject(new Error('store down')) });
  s.down(session.id);
  await s.settled();
  expect(s.log).toEqual([`drop ${session.id}`, 'error Error: store down']);
  expect(s.held.has(session.id)).toBe(false);
});
