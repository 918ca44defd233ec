import { describe, expect, it } from 'vitest';
import { type ReplayEvent, replayDispatch } from './dispatchReplay.js';

const caps = { globalCap: 4, userCap: () => 2 };
const ev = (
  sessionId: string,
  userId: string,
  from: string | null,
  to: string,
  tick: number,
): ReplayEvent => ({ sessionId, userId, from, to, tick });

/** cy queues two sessions, then bo (a newcomer) one. */
const cyThenBo = [
  ev('c1', 'cy', null, 'queued', 1),
  ev('c2', 'cy', null, 'queued', 1),
  ev('b1', 'bo', null, 'queued', 2),
];

describe('replayDispatch: the newcomer bound', () => {
  it('a newcomer passed over twice by one other user is a violation', () => {
    const events = [
      ...cyThenBo,
      ev('c1', 'cy', 'queued', 'running', 3),
      ev('c2', 'cy', 'queued', 'running', 4),
      ev('b1', 'bo', 'queued', 'running', 5),
    ];
    expect(replayDispatch(events, caps).violations).toEqual([
      'newcomer b1 waited 2 grants of one user',
    ]);
  });

  // Seed 354317890 of test/cli/clusterChaos.e2e.test.ts: a dead node's two
  // runs of bo re-queued in one tick; the row of the one that waits came
  // first, the other was granted in that tick. bo was served: no violation.
  it("the user is the newcomer: any of its sessions' first grant ends the wait", () => {
    const events = [
      ...cyThenBo,
      ev('b2', 'bo', null, 'queued', 2),
      ev('c1', 'cy', 'queued', 'running', 2),
      ev('c2', 'cy', 'queued', 'running', 2),
      ev('b2', 'bo', 'queued', 'running', 2),
      ev('b1', 'bo', 'queued', 'running', 3),
    ];
    const report = replayDispatch(events, caps);
    expect(report.violations).toEqual([]);
    expect(report.newcomers).toBe(2);
  });

  // The documented exception: a dead node's runs go back to the head of
  // their user's line, ahead of a newcomer.
  it("re-queued attempts' grants do not count against a newcomer's wait", () => {
    const requeue = (e: ReplayEvent): ReplayEvent => ({ ...e, reason: 'requeued after s0' });
    const events = [
      ...cyThenBo.slice(0, 2).map(requeue),
      ...cyThenBo.slice(2),
      ev('c1', 'cy', 'queued', 'running', 3),
      ev('c2', 'cy', 'queued', 'running', 4),
      ev('b1', 'bo', 'queued', 'running', 5),
    ];
    expect(replayDispatch(events, caps).violations).toEqual([]);
  });

  it('a newcomer whose sessions are all cancelled waits no more', () => {
    const events = [
      ev('b1', 'bo', null, 'queued', 1),
      ev('b1', 'bo', 'queued', 'cancelled', 2),
      ev('c1', 'cy', null, 'queued', 3),
      ev('c1', 'cy', 'queued', 'running', 4),
      ev('c2', 'cy', null, 'queued', 5),
      ev('c2', 'cy', 'queued', 'running', 6),
    ];
    expect(replayDispatch(events, caps).violations).toEqual([]);
  });
});
