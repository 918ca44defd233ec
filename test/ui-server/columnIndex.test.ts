import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import type { BoardCard, Column } from '../../src/board/boardPort.js';
import { COLUMNS, orderOf } from '../../src/board/boardWindow.js';
import * as mod from '../../src/ui-server/columnIndex.js';
import { ColumnIndex, REBUILD_SHARE } from '../../src/ui-server/columnIndex.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/ui-server/columnIndex.ts', import.meta.url), mod);

const at = (s: number) => new Date(Date.UTC(2026, 10, 1, 10, 0, s)).toISOString();
const cardOf = (id: number, column: Column, key: number, user: string): BoardCard => ({
  taskId: `t${id}`,
  userId: user,
  title: `task ${id}`,
  column,
  sessionId: `s${id}`,
  attempt: 1,
  status:
    column === 'queued'
      ? 'queued'
      : column === 'running'
        ? 'running'
        : column === 'done'
          ? 'succeeded'
          : 'failed',
  // Few distinct keys, so ties (broken by task id) are common.
  queued: column === 'queued' ? { position: key, since: at(0) } : null,
  running: column === 'running' ? { since: at(key) } : null,
  failure: column === 'failed' ? { reason: 'exit_code', recoverable: true } : null,
  exitCode: null,
  lastOutput: [],
  updatedAt: at(key),
});

const change = fc.record({
  id: fc.nat({ max: 299 }),
  column: fc.constantFrom<Column>(...COLUMNS),
  key: fc.nat({ max: 20 }),
  user: fc.constantFrom('ann', 'bob'),
});

test.prop(
  [
    fc.array(change, { minLength: 200, maxLength: 400 }),
    // Batches small (card by card) and large (a rebuild of the column).
    fc.array(
      fc.oneof(
        fc.array(change, { minLength: 1, maxLength: 3 }),
        fc.array(change, { minLength: 1, maxLength: 120 }),
      ),
      { maxLength: 16 },
    ),
    fc.constantFrom<'all' | 'ann'>('all', 'ann'),
    // Card by card always, a rebuild always, or the index's own choice.
    fc.constantFrom(Number.POSITIVE_INFINITY, 0, REBUILD_SHARE),
  ],
  { numRuns: 90 },
)(
  'each column equals the sorted, filtered full list after any batches',
  (initial, batches, who, share) => {
    const accepts = (c: BoardCard) => who === 'all' || c.userId === who;
    const model = new Map<string, BoardCard>();
    for (const c of initial) model.set(`t${c.id}`, cardOf(c.id, c.column, c.key, c.user));
    const index = new ColumnIndex(accepts, model.values(), share);
    const check = () => {
      for (const column of COLUMNS) {
        const want = [...model.values()]
          .filter((c) => accepts(c) && c.column === column)
          .sort(orderOf(column));
        expect(index.count(column)).toBe(want.length);
        expect(index.slice(column, 0, want.length + 1)).toEqual(want);
        expect(index.slice(column, 3, 2)).toEqual(want.slice(3, 5));
      }
    };
    check();
    for (const batch of batches) {
      const byId = new Map<string, BoardCard>();
      for (const c of batch) byId.set(`t${c.id}`, cardOf(c.id, c.column, c.key, c.user));
      const before = new Map(model);
      for (const [id, c] of byId) model.set(id, c);
      const touched = index.apply(byId.values());
      // The columns it says moved are the ones a changed card left or entered.
      const expected = new Set<Column>();
      for (const [id, c] of byId) {
        const old = before.get(id);
        if (old !== undefined && accepts(old)) expected.add(old.column);
        if (accepts(c)) expected.add(c.column);
      }
      expect(touched).toEqual(expected);
      check();
    }
  },
);
