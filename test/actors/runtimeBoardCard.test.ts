import { expect, test } from 'vitest';
import * as card from '../../src/actors/runtimeBoardCard.js';
import { runningRows } from '../support/boardRuns.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/actors/runtimeBoardCard.ts', import.meta.url), card);

const entry = (n: number, over: Partial<card.BoardEntry> = {}): card.BoardEntry => ({
  ...runningRows(n),
  lines: [],
  partial: '',
  position: null,
  restored: false,
  previous: null,
  ...over,
});

test('a running card: its lines with the unfinished one cut, the later of its two updates', () => {
  const e = entry(1, { lines: ['a', 'b'], partial: 'x'.repeat(card.CARD_LINE_CHARS + 10) });
  const c = card.toCard(
    { ...e, task: { ...e.task, updatedAt: new Date(Date.UTC(2027, 0, 1)) } },
    null,
    null,
  );
  expect(c).toMatchObject({
    column: 'running',
    status: 'running',
    queued: null,
    running: { since: e.session.claimedAt?.toISOString(), until: null },
    failure: null,
    updatedAt: '2027-01-01T00:00:00.000Z',
    timeLimitMs: null,
  });
  expect(c.lastOutput.slice(0, 2)).toEqual(['a', 'b']);
  expect(c.lastOutput[2]).toBe(card.cutLine(e.partial));
  expect(c.lastOutput[2]?.length).toBeLessThan(e.partial.length);
});

test('a running card with a time limit says until when; queued, it carries the limit alone', () => {
  const e = entry(1);
  const limited = { ...e, task: { ...e.task, timeLimitMs: 90_000 } };
  const since = e.session.claimedAt as Date;
  expect(card.toCard(limited, null, null)).toMatchObject({
    running: {
      since: since.toISOString(),
      until: new Date(since.getTime() + 90_000).toISOString(),
    },
    timeLimitMs: 90_000,
  });
  const queued = {
    ...limited,
    session: { ...e.session, status: 'queued' as const, claimedAt: null },
  };
  expect(card.toCard(queued, 2, null)).toMatchObject({ running: null, timeLimitMs: 90_000 });
});

test('a queued card has a place (1 when unknown); a failed one its reason; only the last lines are kept', () => {
  const { session } = runningRows(1);
  const queued = entry(1, { session: { ...session, status: 'queued', claimedAt: null } });
  expect(card.toCard(queued, 4, null).queued?.position).toBe(4);
  expect(card.toCard(queued, null, null).queued?.position).toBe(1);
  const lines = Array.from({ length: card.CARD_OUTPUT_LINES + 5 }, (_, i) => `l${i}`);
  const failed = entry(1, {
    session: { ...session, status: 'failed', failureReason: null, userRecoverable: true },
    lines,
    previous: { attempt: 1, reason: 'timeout' },
  });
  const c = card.toCard(failed, 9, { running: 1, max: 1 });
  expect(c).toMatchObject({
    column: 'failed',
    queued: null,
    failure: { reason: 'unknown', recoverable: true },
    previous: { attempt: 1, reason: 'timeout' },
  });
  expect(c.lastOutput).toEqual(lines.slice(-card.CARD_OUTPUT_LINES));
});

test('a queued card says whether its user is at their cap; at position 0 (granted) it is not', () => {
  const { session } = runningRows(1);
  const queued = entry(1, { session: { ...session, status: 'queued', claimedAt: null } });
  const since = session.enqueuedAt.toISOString();
  const atCap = { running: 2, max: 2 };
  expect(card.toCard(queued, 3, atCap).queued).toEqual({ position: 3, since, atCap });
  expect(card.toCard(queued, 3, null).queued).toEqual({ position: 3, since, atCap: null });
  expect(card.toCard(queued, 0, atCap).queued).toEqual({ position: 0, since, atCap: null });
});

test('board order: oldest task first, ties by id', () => {
  const [a, b, c] = [entry(2), entry(1), { ...entry(1), task: { ...entry(1).task, id: 'task_0' } }];
  expect([a, b, c].sort(card.byBoardOrder).map((e) => e.task.id)).toEqual([
    'task_0',
    'task_1',
    'task_2',
  ]);
});
