import * as mod from '../../src/ui-server/windowGroup.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/ui-server/windowGroup.ts', import.meta.url), mod);

import { expect, it } from 'vitest';
import type { BoardCard, UserAtCap } from '../../src/board/boardPort.js';
import { ColumnIndex } from '../../src/ui-server/columnIndex.js';
import { type ViewState, WindowGroup } from '../../src/ui-server/windowGroup.js';
import { queuedCard } from '../support/sampleCard.js';

it('sends a queued card whose user’s at-cap state alone moved in `atCap`, not whole', () => {
  const a = queuedCard('a', { userId: 'ann' });
  const b = queuedCard('b', { userId: 'bob', queued: { position: 2, since: 'x', atCap: null } });
  const capped = new Map<string, UserAtCap | null>([['ann', { running: 1, max: 1 }]]);
  const positions = new Map<string, number>([
    ['a', 1],
    ['b', 2],
  ]);
  let seq = 1;
  const view = (): ViewState => ({
    epoch: 'e',
    seq,
    users: ['ann', 'bob'],
    card: () => undefined,
    positionOf: (c: BoardCard) => positions.get(c.taskId) ?? 0,
    atCapOf: (c: BoardCard) => capped.get(c.userId) ?? null,
  });
  const group = new WindowGroup('k', {}, new ColumnIndex(() => true, [a, b]), view());
  const snapshot = JSON.parse(group.snapshotFrame(view()).toString()) as { cards: BoardCard[] };
  // The card as the source carried it says nothing of ann's cap; the window's says it.
  expect(snapshot.cards.map((c) => c.queued)).toEqual([
    { position: 1, since: a.queued?.since, atCap: { running: 1, max: 1 } },
    { position: 2, since: 'x', atCap: null },
  ]);
  seq = 2;
  expect(group.update(view(), false)).toBeNull();
  // A finish of ann's (on any node): her card is no longer at cap, nothing else moved.
  capped.set('ann', null);
  seq = 3;
  expect(JSON.parse(group.update(view(), false) ?? 'null')).toEqual({
    type: 'update',
    seq: 3,
    cards: [],
    atCap: { a: null },
    removed: [],
  });
  // bob reaches his cap as the line moves up: both ride the compact maps.
  capped.set('bob', { running: 2, max: 2 });
  positions.set('b', 1);
  seq = 4;
  expect(JSON.parse(group.update(view(), false) ?? 'null')).toEqual({
    type: 'update',
    seq: 4,
    cards: [],
    positions: { b: 1 },
    atCap: { b: { running: 2, max: 2 } },
    removed: [],
  });
});
