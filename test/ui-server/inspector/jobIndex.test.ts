import { describe, expect, it } from 'vitest';
import type { BoardCard, BoardSource } from '../../../src/board/boardPort.js';
import * as protocol from '../../../src/ui-server/inspector/inspectorProtocol.js';
import { JobIndex } from '../../../src/ui-server/inspector/jobIndex.js';
import { runDocExamples } from '../../support/docExamples.js';

runDocExamples(
  new URL('../../../src/ui-server/inspector/inspectorProtocol.ts', import.meta.url),
  protocol,
);

const card = (n: number, column: BoardCard['column']): BoardCard => ({
  taskId: `task_${n}`,
  userId: n % 2 ? 'alice' : 'bob',
  title: `job ${n}`,
  column,
  sessionId: `ses_${n}`,
  attempt: 1,
  status: column === 'running' ? 'running' : column === 'queued' ? 'queued' : 'succeeded',
  queued: null,
  running: null,
  failure: null,
  exitCode: null,
  lastOutput: [],
  updatedAt: '2026-11-01T10:00:00.000Z',
});

function board(initial: BoardCard[]) {
  const listeners = new Set<(c: BoardCard) => void>();
  const source: BoardSource = {
    cards: () => initial,
    subscribe: (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
  };
  const emit = (c: BoardCard) => {
    for (const l of listeners) l(c);
  };
  return { source, emit, listeners };
}

describe('JobIndex: a runner (by its session id) to its job', () => {
  it('starts from the running cards, learns sessions as they run, keeps them after they end', () => {
    const b = board([card(1, 'running'), card(2, 'queued')]);
    let learnt = 0;
    const index = new JobIndex(b.source, () => learnt++);
    expect(index.jobOf('ses_1')).toEqual({ taskId: 'task_1', title: 'job 1', userId: 'alice' });
    expect(index.jobOf('ses_2')).toBeUndefined(); // queued: no runner yet
    const v = index.version;
    b.emit(card(2, 'running'));
    expect(index.jobOf('ses_2')?.title).toBe('job 2');
    expect([learnt, index.version]).toEqual([1, v + 1]);
    // Output lines and the end of the run change nothing it holds.
    b.emit(card(2, 'running'));
    b.emit(card(2, 'done'));
    expect([learnt, index.version]).toEqual([1, v + 1]);
    expect(index.jobOf('ses_2')?.userId).toBe('bob');
    index.close();
    expect(b.listeners.size).toBe(0);
  });

  it('is bounded: the oldest session goes first', () => {
    const b = board([]);
    const index = new JobIndex(b.source, () => {}, 3);
    for (let n = 1; n <= 5; n++) b.emit(card(n, 'running'));
    expect([1, 2, 3, 4, 5].map((n) => index.jobOf(`ses_${n}`) !== undefined)).toEqual([
      false,
      false,
      true,
      true,
      true,
    ]);
  });
});
