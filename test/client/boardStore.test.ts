import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import * as mod from '../../src/client/boardStore.js';
import { cardsInColumn, createBoardStore } from '../../src/client/boardStore.js';
import { runDocExamples } from '../support/docExamples.js';
import { queuedCard } from './clientHarness.js';

runDocExamples(new URL('../../src/client/boardStore.ts', import.meta.url), mod);

const card = queuedCard;

const counts = { queued: 40, running: 2, done: 0, failed: 1 };

describe('board store', () => {
  it('replaces everything on a snapshot and goes live', () => {
    const store = createBoardStore();
    store.trigger.update({ seq: 1, cards: [card('old')], removed: [] });
    store.trigger.snapshot({ epoch: 'e', seq: 7, counts, users: ['alice'], cards: [card('a')] });
    const ctx = store.getSnapshot().context;
    expect([Object.keys(ctx.cards), ctx.seq, ctx.epoch, ctx.connection, ctx.counts]).toEqual([
      ['a'],
      7,
      'e',
      'live',
      counts,
    ]);
  });

  it('ignores an update at or below its seq (sent before a snapshot replaced the window)', () => {
    const store = createBoardStore();
    store.trigger.snapshot({ epoch: 'e', seq: 3, counts, users: [], cards: [card('kept')] });
    let notified = 0;
    store.subscribe(() => {
      notified += 1;
    });
    store.trigger.update({ seq: 3, cards: [card('dup')], removed: ['kept'] });
    expect(notified).toBe(0);
    const moved = { ...counts, queued: 41 };
    store.trigger.update({ seq: 4, counts: moved, cards: [card('new')], removed: ['kept'] });
    const ctx = store.getSnapshot().context;
    expect([notified, Object.keys(ctx.cards), ctx.counts.queued]).toEqual([1, ['new'], 41]);
  });

  it('takes positions that moved alone, keeping the rest of each card', () => {
    const store = createBoardStore();
    const b = card('b', {
      queued: { position: 3, since: '2026-11-01T10:00:01.000Z', atCap: null },
    });
    store.trigger.snapshot({ epoch: 'e', seq: 1, counts, users: [], cards: [card('a'), b] });
    store.trigger.update({ seq: 2, cards: [], positions: { b: 2, gone: 9 }, removed: ['a'] });
    const ctx = store.getSnapshot().context;
    expect(ctx.cards).toEqual({
      b: { ...b, queued: { position: 2, since: '2026-11-01T10:00:01.000Z', atCap: null } },
    });
  });

  it('takes at-cap states that moved alone, with or without a position, keeping the rest', () => {
    const store = createBoardStore();
    const since = '2026-11-01T10:00:01.000Z';
    const b = card('b', { queued: { position: 3, since, atCap: null } });
    const c = card('c', { queued: { position: 4, since, atCap: { running: 1, max: 1 } } });
    store.trigger.snapshot({ epoch: 'e', seq: 1, counts, users: [], cards: [b, c] });
    store.trigger.update({
      seq: 2,
      cards: [],
      positions: { c: 3 },
      atCap: { b: { running: 2, max: 2 }, c: null, gone: null },
      removed: [],
    });
    expect(store.getSnapshot().context.cards).toEqual({
      b: { ...b, queued: { position: 3, since, atCap: { running: 2, max: 2 } } },
      c: { ...c, queued: { position: 3, since, atCap: null } },
    });
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
    'seq only grows, and each card is its latest update',
    (patches) => {
      const store = createBoardStore();
      const latest = new Map<string, number>();
      let max = 0;
      for (const [seq, id] of patches) {
        store.trigger.update({ seq, cards: [card(id, { attempt: seq })], removed: [] });
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
