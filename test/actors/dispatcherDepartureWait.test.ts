/**
 * The wait before a tick leaves (src/actors/dispatcherDepartureWait.ts),
 * driven turn by turn through a fake `nextTurn`. The rule it applies is
 * test/actors/dispatcherDeparture.test.ts; the dispatcher over it is
 * test/actors/dispatcher.test.ts.
 */
import { expect, test } from 'vitest';
import { type DepartureWait, waitToDepart } from '../../src/actors/dispatcherDepartureWait.js';

/** A wait whose turns run only when the test says. */
function harness(o: { pending: number; maxTurns?: number; stopped?: boolean }) {
  const turns: Array<() => void> = [];
  const s = { pending: o.pending, left: 0, stopped: o.stopped ?? false };
  const w: DepartureWait = {
    pending: () => s.pending,
    leaveNow: () => s.stopped,
    maxOps: 100,
    maxTurns: o.maxTurns ?? 8,
    nextTurn: (fn) => turns.push(fn),
    leave: () => {
      s.left += 1;
    },
  };
  const turn = () => {
    const fn = turns.shift();
    if (fn === undefined) throw new Error('no turn scheduled');
    fn();
  };
  return { s, w, turn, turns };
}

test('it waits while a turn brings ops and leaves at the first quiet one, once', () => {
  const h = harness({ pending: 1 });
  waitToDepart(h.w);
  expect(h.s.left).toBe(0);
  h.s.pending = 3;
  h.turn();
  expect(h.s.left).toBe(0);
  h.turn();
  expect(h.s.left).toBe(1);
  expect(h.turns).toHaveLength(0);
});

test('it leaves after maxTurns though ops keep arriving', () => {
  const h = harness({ pending: 1, maxTurns: 3 });
  waitToDepart(h.w);
  for (let i = 0; i < 3; i++) {
    h.s.pending += 1;
    h.turn();
  }
  expect(h.s.left).toBe(1);
  expect(h.turns).toHaveLength(0);
});

test('a stopped dispatcher leaves at the first check whatever arrived', () => {
  const h = harness({ pending: 1 });
  waitToDepart(h.w);
  h.s.pending = 50;
  h.s.stopped = true;
  h.turn();
  expect(h.s.left).toBe(1);
});

test('no coalescing: it leaves after one microtask, without a turn', async () => {
  const h = harness({ pending: 1, maxTurns: 0 });
  waitToDepart(h.w);
  expect(h.s.left).toBe(0);
  await Promise.resolve();
  expect(h.s.left).toBe(1);
  expect(h.turns).toHaveLength(0);
});
