/**
 * Fairness: a flood from one user delays another user's first session by at
 * most one turn of the rotation, whatever order slots free up in and even
 * while more work keeps arriving.
 */
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { PoolIndex } from '../../src/machines/poolIndex.js';

describe('fairness', () => {
  it('one session from a second user waits for one turn of a flood of 5,000', () => {
    const pool = new PoolIndex({ globalMax: 20, overrides: new Map([['ann', 20]]) });
    for (let i = 0; i < 5_000; i++) pool.enqueue('ann', `a${i}`, i);
    expect(pool.runningCount).toBe(20);
    // ann's next session is in the current turn, bob joins right behind it.
    expect(pool.enqueue('bob', 'b0', 5_000).position).toBe(2);
    expect(pool.positionOf('a20')).toBe(1);
    expect(pool.positionOf('a21')).toBe(3);
    expect(pool.release('a0', 5_001)).toEqual([{ sessionId: 'a20', userId: 'ann' }]);
    expect(pool.positionOf('b0')).toBe(1);
    expect(pool.release('a1', 5_002)).toEqual([{ sessionId: 'b0', userId: 'bob' }]);
  });

  test.prop(
    [
      fc.array(fc.integer({ min: 0, max: 200 }), { minLength: 1, maxLength: 8 }),
      fc.integer({ min: 1, max: 6 }),
      fc.integer({ min: 1, max: 3 }),
      fc.array(fc.tuple(fc.nat(), fc.nat(), fc.boolean()), { minLength: 1, maxLength: 400 }),
    ],
    { numRuns: 150 },
  )(
    'a newcomer is granted after at most one grant to each user already waiting',
    (floods, globalMax, perUserMax, churn) => {
      const pool = new PoolIndex({ globalMax, perUserMax });
      let t = 0;
      floods.forEach((n, u) => {
        for (let i = 0; i < n; i++) pool.enqueue(`u${u}`, `u${u}-${i}`, t++);
      });
      const waiting = new Set(
        [...pool.userCounts()].filter((c) => c.queued > 0).map((c) => c.userId),
      );
      let granted = pool.enqueue('newcomer', 'first', t++).position === 0;
      const before = new Map<string, number>();
      let next = 0;
      for (const [pick, user, arrive] of churn) {
        if (granted) break;
        // More work keeps arriving from the flooders while slots free up in any order.
        if (arrive) pool.enqueue(`u${user % floods.length}`, `late-${next++}`, t++);
        const held = [...pool.entries()].filter(([, s]) => s.state === 'running').map(([id]) => id);
        const id = held[pick % Math.max(1, held.length)];
        if (id === undefined) continue;
        for (const g of pool.release(id, t++)) {
          if (g.sessionId === 'first') granted = true;
          else if (!granted) before.set(g.userId, (before.get(g.userId) ?? 0) + 1);
        }
      }
      for (const [user, n] of before) {
        expect(waiting.has(user), `${user} was not waiting yet got ahead`).toBe(true);
        expect(n, `${user} got ${n} grants before the newcomer`).toBeLessThanOrEqual(1);
      }
    },
  );
});
