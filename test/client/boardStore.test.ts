import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import type { BoardCard } from '../../src/board/boardPort.js';
import * as mod from '../../src/client/boardStore.js';
import { cardsInColumn, createBoardStore } from '../../src/client/boardStore.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/client/boardStore.ts', import.meta.url), mod);

const card = (taskId: string, extra: Partial<BoardCard> = {}): BoardCard => ({
  taskId,
  userId: 'alice',
  title: taskId,
  column: 'queued',
  sessionId: `s-${taskId}`,
  attempt: 1,
  status: 'queued',
  queued: { position: 1, since: '2026-11-01T10:00:00.000Z' },
  running: null,
  failure: null,
  exitCode: null,
  lastOutput: [],
  updatedAt: '2026-11-01T10:00:00.000Z',
  ...extra,
});

describe('board store', () => {
  it('replaces everything on a snapshot and goes live', () => {
    const store = createBoardStore();
    store.trigger.patch({ seq: 1, card: card('old') });
    store.trigger.snapshot({ epoch: 'e', seq: 7, cards: [card('a')] });
    const ctx = store.getSnapshot().context;
    expect([Object.keys(ctx.cards), ctx.seq, ctx.epoch, ctx.connection]).toEqual([
      ['a'],
      7,
      'e',
      'live',
    ]);
  });

  it('ignores duplicate patches and does not notify for them', () => {
    const store = createBoardStore();
    store.trigger.snapshot({ epoch: 'e', seq: 3, cards: [] });
    let notified = 0;
    store.subscribe(() => {
      notified += 1;
    });
    store.trigger.patch({ seq: 3, card: card('dup') });
    expect(notified).toBe(0);
    store.trigger.patch({ seq: 4, card: card('new') });
    expect([notified, Object.keys(store.getSnapshot().context.cards)]).toEqual([1, ['new']]);
  });

  it('sorts running cards by start and finished ones newest first', () => {
    const ctx = {
      cards: {
        a: card('a', {
          column: 'running',
          queued: null,
          running: { since: '2026-11-01T10:05:00Z' },
        }),
        b: card('b', {
          column: 'running',
          queued: null,
          running: { since: '2026-11-01T10:01:00Z' },
        }),
        c: card('c', { column: 'done', updatedAt: '2026-11-01T10:00:00Z' }),
        d: card('d', { column: 'done', updatedAt: '2026-11-01T11:00:00Z' }),
      },
    };
    expect(cardsInColumn(ctx, 'running').map((c) => c.taskId)).toEqual(['b', 'a']);
    expect(cardsInColumn(ctx, 'done').map((c) => c.taskId)).toEqual(['d', 'c']);
  });

  test.prop([fc.array(fc.tuple(fc.nat(20), fc.constantFrom('a', 'b', 'c')), { maxLength: 40 })])(
    'seq only grows, and each card is its latest patch',
    (patches) => {
      const store = createBoardStore();
      const latest = new Map<string, number>();
      let max = 0;
      for (const [seq, id] of patches) {
        store.trigger.patch({ seq, card: card(id, { attempt: seq }) });
        if (seq > max) {
          max = seq;
          latest.set(id, seq);
        }
      }
      const ctx = store.getSnapshot().context;
      expect(ctx.seq).toBe(max);
      for (const [id, seq] of latest) expect(ctx.cards[id]?.attempt).toBe(seq);
    },
  );
});
