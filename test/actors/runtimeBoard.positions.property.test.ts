/**
 * The board's positions are the RunnerPool's (DESIGN.md rule 4): with one
 * user flooding the line and another arriving, after every random step
 * (arrivals, time passing so runs finish, cancels, cap changes, a waiter
 * crash, a pool crash) every queued card, both as `cards()` answers it and
 * as the last card emitted to subscribers, carries exactly the pool's
 * `positionOf` for its session.
 */
import { PGlite } from '@electric-sql/pglite';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { AnyActorRef } from 'xstate';
import type { RuntimeCard } from '../../src/actors/runtimeTypes.js';
import type { PoolIndex } from '../../src/machines/poolIndex.js';
import type { Supervisor } from '../../src/supervisor/Supervisor.js';
import { createTestRuntime, type TestRuntime } from '../../src/testing/index.js';

let pglite: PGlite;
beforeAll(async () => {
  pglite = await PGlite.create('memory://');
}, 30_000);
afterAll(async () => {
  await pglite.close();
});

type Step =
  | { kind: 'flood'; count: number; seconds: number }
  | { kind: 'arrive'; seconds: number }
  | { kind: 'advance'; ms: number }
  | { kind: 'cancel'; pick: number }
  | { kind: 'cap'; user: number; max: number | null }
  | { kind: 'crashRunner'; pick: number }
  | { kind: 'crashPool' };

const USERS = ['flood', 'other'];
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('flood' as const),
      count: fc.integer({ min: 1, max: 6 }),
      seconds: fc.integer({ min: 1, max: 60 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('arrive' as const),
      seconds: fc.integer({ min: 1, max: 60 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      ms: fc.integer({ min: 1, max: 30_000 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('cap' as const),
      user: fc.nat(1),
      max: fc.option(fc.integer({ min: 0, max: 3 })),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('crashRunner' as const), pick: fc.nat() }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('crashPool' as const) }) },
);

const poolIndex = (h: TestRuntime): PoolIndex | undefined =>
  (
    (h.runtime.root.child('runnerPool') as AnyActorRef | undefined)?.getSnapshot() as
      | { context: { index: PoolIndex } }
      | undefined
  )?.context.index;

function checkPositions(h: TestRuntime, lastSeen: ReadonlyMap<string, RuntimeCard>): number {
  const index = poolIndex(h);
  expect(index).toBeDefined();
  let queued = 0;
  for (const card of h.board()) {
    if (card.column !== 'queued') continue;
    queued += 1;
    const pool = index?.positionOf(card.sessionId);
    expect({ taskId: card.taskId, position: card.queued?.position }).toEqual({
      taskId: card.taskId,
      position: pool,
    });
    expect(lastSeen.get(card.taskId)?.queued?.position).toBe(pool);
  }
  return queued;
}

test('every queued card carries the pool’s position after every step', async () => {
  let sawLine = false;
  await fc.assert(
    fc.asyncProperty(fc.array(step, { minLength: 3, maxLength: 12 }), async (steps) => {
      const h = await createTestRuntime({
        pglite,
        caps: { maxRunning: 3, defaultUserCap: 2 },
        reconcileMs: 20_000,
      });
      const lastSeen = new Map<string, RuntimeCard>();
      const off = h.runtime.subscribe((card) => lastSeen.set(card.taskId, card));
      const task = (seconds: number) => ({
        title: 't',
        image: 'runner:v1',
        command: ['agent', String(seconds)],
      });
      try {
        for (const s of steps) {
          if (s.kind === 'flood') {
            for (let i = 0; i < s.count; i += 1) {
              const created = await h.runtime.createTask('flood', task(s.seconds));
              // What createTask answers is the pool's place at that moment.
              const now = poolIndex(h)?.positionOf(created.sessionId);
              if (now !== null && now !== undefined) expect(created.position).toBe(now);
            }
          } else if (s.kind === 'arrive') {
            const created = await h.runtime.createTask('other', task(s.seconds));
            expect(created.position).toBe(poolIndex(h)?.positionOf(created.sessionId));
          } else if (s.kind === 'advance') await h.advance(s.ms);
          else if (s.kind === 'cancel') {
            const open = h.board().filter((c) => c.column === 'queued' || c.column === 'running');
            const victim = open[s.pick % Math.max(1, open.length)];
            if (victim) await h.runtime.cancel(null, victim.taskId);
          } else if (s.kind === 'cap') {
            await h.runtime.setUserCap(USERS[s.user] ?? 'flood', s.max);
          } else if (s.kind === 'crashRunner') {
            const sup = h.runtime.root.child('taskRunners') as Supervisor | undefined;
            const live = sup?.whichChildren().filter((c) => c.status === 'running') ?? [];
            const victim = live[s.pick % Math.max(1, live.length)];
            (victim?.ref as AnyActorRef | undefined)?.stop();
          } else {
            (h.runtime.root.child('runnerPool') as AnyActorRef | undefined)?.stop();
          }
          await h.settle();
          if (checkPositions(h, lastSeen) > 1) sawLine = true;
        }
        expect(h.errors).toEqual([]);
      } finally {
        off();
        await h.close();
      }
    }),
    { numRuns: 15 },
  );
  // The property must have looked at real lines, not only empty boards.
  expect(sawLine).toBe(true);
}, 240_000);
