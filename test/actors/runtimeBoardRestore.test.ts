/**
 * The stored-output restore on both engines: only finished cards with no
 * output in memory read it, once, in one batch per turn of the loop; a card
 * handed its tail with its row (the feed's read) reads nothing.
 */
import { expect, it } from 'vitest';
import type { BoardEntry } from '../../src/actors/runtimeBoardCard.js';
import { OutputRestore } from '../../src/actors/runtimeBoardRestore.js';
import { createTaskWithSession, type Db } from '../../src/db/index.js';
import { describeEachEngine } from '../support/databases.js';

/** One card per title, each with a stored output; `running` is live, the rest finished. */
async function cardsWithStoredOutputs(
  db: Db,
  titles: readonly string[],
  lines: (title: string) => string[],
): Promise<{ entries: Map<string, BoardEntry>; restore: OutputRestore }> {
  const now = new Date(Date.UTC(2026, 0, 1));
  const entries = new Map<string, BoardEntry>();
  for (const title of titles) {
    const { task, session } = await createTaskWithSession(db, {
      userId: 'alice',
      title,
      spec: { image: 'i', command: ['c'] },
      now,
    });
    entries.set(task.id, {
      task,
      session: { ...session, status: title === 'running' ? 'running' : 'succeeded' },
      lines: lines(title),
      partial: '',
      position: null,
      restored: false,
      previous: null,
    });
    await db
      .insertInto('session_outputs')
      .values({
        session_id: session.id,
        text: `${title} 1\n${title} 2\n`,
        created_at: now,
        truncated: false,
        total_bytes: 0,
      })
      .execute();
  }
  const restore = new OutputRestore({
    db,
    entryOf: (id) => entries.get(id),
    entryOfSession: (sid) => [...entries.values()].find((e) => e.session.id === sid),
  });
  return { entries, restore };
}

describeEachEngine('the board output restore', (getDb) => {
  it('fills finished cards from their stored tails, once, and leaves the others alone', async () => {
    const { entries, restore } = await cardsWithStoredOutputs(
      getDb().db,
      ['done', 'running', 'shown'],
      (title) => (title === 'shown' ? ['mine'] : []),
    );
    const ids = [...entries.keys()];
    // One turn of the loop: one batch for all three.
    await Promise.all(ids.map((id) => restore.soon(id)));
    const lines = () => [...entries.values()].map((e) => e.lines);
    expect(lines()).toEqual([['done 1', 'done 2'], [], ['mine']]);
    // Looked for once: a card emptied since is not read again.
    const done = entries.get(ids[0] ?? '');
    if (done) done.lines = [];
    await restore.now(ids);
    expect(lines()).toEqual([[], [], ['mine']]);
  });

  it('fills a finished card from the tail it is handed and never reads the store for it', async () => {
    const { entries, restore } = await cardsWithStoredOutputs(
      getDb().db,
      ['done', 'empty', 'running'],
      () => [],
    );
    const [done, empty, running] = [...entries.values()];
    restore.take(done!, { tail: 'cut line\nlast\n', whole: false });
    restore.take(empty!, null);
    // A live card takes no stored tail: its output is still coming.
    restore.take(running!, { tail: 'x\n', whole: true });
    await restore.now([...entries.keys()]);
    // A read would have shown "done 1", "done 2" and "empty 1", "empty 2".
    expect([...entries.values()].map((e) => e.lines)).toEqual([['last'], [], []]);
    expect([done!.restored, empty!.restored, running!.restored]).toEqual([true, true, false]);
  });
});
