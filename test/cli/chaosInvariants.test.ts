import { describe, expect, it } from 'vitest';
import { runDocExamples } from '../support/docExamples.js';
import * as chaos from './chaosInvariants.js';
import { type ChaosEvent, type ChaosFacts, checkChaos } from './chaosInvariants.js';

runDocExamples(new URL('./chaosInvariants.ts', import.meta.url), chaos);

/** Task t1 run by a@1, which is killed at 10; b@1 re-queues it at `failAt` and runs attempt 2. */
function facts(failAt: number, over: Partial<ChaosFacts> = {}): ChaosFacts {
  const ev = (
    sessionId: string,
    from: string | null,
    to: string,
    node: string | null,
    atMs: number,
  ): ChaosEvent => ({
    sessionId,
    userId: 'u',
    from,
    to,
    reason: null,
    node,
    atMs,
    tick: atMs,
  });
  return {
    taskIds: ['t1'],
    sessions: [
      { id: 's1', taskId: 't1', attempt: 1, status: 'failed', failureReason: 'owner_lost' },
      { id: 's2', taskId: 't1', attempt: 2, status: 'succeeded', failureReason: null },
    ],
    events: [
      ev('s1', null, 'queued', null, 0),
      ev('s1', 'queued', 'running', 'a@1', 1),
      ev('s1', 'running', 'failed', 'a@1', failAt),
      ev('s2', null, 'queued', null, failAt),
      ev('s2', 'queued', 'running', 'b@1', failAt + 1),
      ev('s2', 'running', 'succeeded', 'b@1', failAt + 2),
    ],
    outputs: new Map([['s2', 'out\n']]),
    expectedOutput: new Map([['t1', 'out\n']]),
    killedAt: new Map([['a@1', 10]]),
    caps: { globalCap: 1, userCap: 1 },
    boundMs: 100,
    ...over,
  };
}

describe('checkChaos', () => {
  it('an orphan re-queued within the bound and run again is fine', () => {
    expect(checkChaos(facts(50))).toMatchObject({ violations: [], orphans: 1, worstLagMs: 40 });
  });

  it('an orphan handled after the bound is a violation, counted from when a node watched', () => {
    expect(checkChaos(facts(500)).violations).toEqual([
      's1: orphan of a@1 handled 490 ms after it could be seen dead',
    ]);
    expect(checkChaos(facts(500, { watchedFrom: new Map([['a@1', 450]]) })).violations).toEqual([]);
  });

  it('a run taken from a live owner, a lost task, a wrong output, a second grant and a cap overrun are each found', () => {
    expect(checkChaos(facts(5)).violations).toEqual([
      's1: failed (null) while its owner a@1 lived',
    ]);
    const lost = facts(50, {
      sessions: [
        { id: 's1', taskId: 't1', attempt: 1, status: 'failed', failureReason: 'owner_lost' },
      ],
    });
    expect(checkChaos(lost).violations).toEqual(['t1: last attempt 1 is failed']);
    expect(checkChaos(facts(50, { outputs: new Map([['s2', 'out\nout\n']]) })).violations).toEqual([
      's2: output is not the command\'s, once: "out\\nout\\n"',
    ]);
    const base = facts(50);
    const twice = { ...base, events: [...base.events, { ...base.events[4]!, atMs: 60 }] };
    expect(checkChaos(twice).violations).toContain('s2: granted twice');
    const both = {
      ...base,
      events: [base.events[0]!, base.events[1]!, base.events[3]!, base.events[4]!],
    };
    expect(checkChaos(both).violations).toContain('2 running > global cap 1');
  });
});
