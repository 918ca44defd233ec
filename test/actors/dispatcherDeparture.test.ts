/**
 * When a tick leaves (src/actors/dispatcherDeparture.ts). The dispatcher's
 * behaviour over it (a run's handle and finish made over a few turns ride
 * one tick) is test/actors/dispatcher.test.ts.
 */
import fc from 'fast-check';
import { expect, test } from 'vitest';
import * as departure from '../../src/actors/dispatcherDeparture.js';
import { departs } from '../../src/actors/dispatcherDeparture.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/actors/dispatcherDeparture.ts', import.meta.url), departure);

test('a tick waits only while ops keep arriving, never past maxTurns or a full batch', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 20 }),
      fc.array(fc.integer({ min: 0, max: 50 }), { minLength: 1, maxLength: 40 }),
      fc.integer({ min: 1, max: 200 }),
      (maxTurns, arrivals, maxOps) => {
        // Replays the dispatcher's checks: `arrivals[i]` ops come in turn i.
        let pending = 1;
        let before = pending;
        let left = -1;
        for (let turn = 1; turn <= arrivals.length; turn++) {
          pending += arrivals[turn - 1] ?? 0;
          if (departs({ turns: turn, pending, pendingBefore: before, maxOps, maxTurns })) {
            left = turn;
            break;
          }
          // It waits only when this turn brought ops, the batch has room and turns are left.
          expect(pending).toBeGreaterThan(before);
          expect(pending).toBeLessThan(maxOps);
          expect(turn).toBeLessThan(maxTurns);
          before = pending;
        }
        // Bounded: it has left by maxTurns (or by the first quiet turn).
        if (left === -1) expect(arrivals.length).toBeLessThan(Math.max(1, maxTurns));
        else expect(left).toBeLessThanOrEqual(Math.max(1, maxTurns));
      },
    ),
    { numRuns: 300 },
  );
});
