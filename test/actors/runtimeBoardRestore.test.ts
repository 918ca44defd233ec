/**
 * The stored-output restore on both engines: only finished cards with no
 * output in memory read it, once, in one batch per turn of the loop.
 */
import { expect, it } from 'vitest';
import type { BoardEntry } from '../../src/actors/runtimeBoardCard.js';
import { OutputRestore } from '../../src/actors/runtimeBoardRestore.js';
import { createTaskWithSession } from '../../src/db/index.js';
import { describeEachEngine } from '../support/databases.js';

describeEachEngine('the board output restore', (getDb) => {
  it('fills finished cards from their stored tails, once, and leaves the others alone', async () => {
    const { db } = getDb();
    const now = new Date(Date.UTC(2026, 0, 1));
    const entries = new Map<string, BoardEntry>();
    for (const title of ['done', 'running', 'shown']) {
      const { task, session } = await createTaskWithSession(db, {
        userId: 'alice',
        title,
        spec: { image: 'i', command: ['c'] },
        now,
      });
      const status = title === 'running' ? 'running' : 'succeeded';
      entries.set(task.id, {
        task,
        session: { ...session, status },
        lines: title === 'shown' ? ['mine'] : [],
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
});
