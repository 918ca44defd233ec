/**
 * Running sessions' shared tails (migration 27): written only by the node
 * that runs the session at the epoch it names, never over a later epoch's,
 * read back only past the `seq` the reader has, deleted by their writer and
 * with their sessions; what a row cannot hold is made storable.
 */
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { ValidationError } from '../../src/db/errors.js';
import { readLiveTails, writeLiveTails } from '../../src/db/liveTails.js';
import { pruneFinished } from '../../src/db/pruneFinished.js';
import { finishWithOutput } from '../../src/db/sessionOutputs.js';
import { claim } from '../../src/db/sessionTransitions.js';
import type { Db } from '../../src/db/transaction.js';
import { describeEachEngine } from '../support/databases.js';
import { enqueue } from './fixtures.js';

const A = 'node-a@1';
const B = 'node-b@1';

describeEachEngine('live tails', (getDb) => {
  /** Another boot whose board is watched: tails are written for it. */
  async function watcher(db: Db, watching = true) {
    await sql`INSERT INTO node_heartbeats (owner, node_id, started_at, beat_at, watching)
      VALUES ('watcher@1', 'watcher', now(), now(), ${watching})
      ON CONFLICT (owner) DO UPDATE SET watching = ${watching}`.execute(db);
  }

  /** A session running under `owner` at epoch 1 (with a watched board elsewhere). */
  async function running(owner: string, user = 'ann') {
    const { db } = getDb();
    await watcher(db);
    const { session } = await enqueue(db, user, new Date());
    await claim(db, { sessionId: session.id, epoch: 0, owner, now: new Date() });
    return session.id;
  }

  it('its runner writes a tail, a reader gets it once, and again only when it changed', async () => {
    const { db } = getDb();
    const id = await running(A);
    expect(
      await writeLiveTails(db, {
        owner: A,
        tails: [{ sessionId: id, epoch: 1, lines: ['one', 'two'] }],
        ended: [],
      }),
    ).toMatchObject({ written: [id], watched: true });
    const [first] = await readLiveTails(db, [{ sessionId: id, epoch: 1, seq: 0 }]);
    expect(first).toMatchObject({ sessionId: id, epoch: 1, lines: ['one', 'two'] });
    const seq = first?.seq ?? 0;
    expect(await readLiveTails(db, [{ sessionId: id, epoch: 1, seq }])).toEqual([]);
    await writeLiveTails(db, {
      owner: A,
      tails: [{ sessionId: id, epoch: 1, lines: ['three'] }],
      ended: [],
    });
    const [next] = await readLiveTails(db, [{ sessionId: id, epoch: 1, seq }]);
    expect(next?.lines).toEqual(['three']);
    expect(next?.seq).toBeGreaterThan(seq);
  });

  it('is not written by a node that does not run the session at that epoch, nor for one that ended', async () => {
    const { db } = getDb();
    const id = await running(A);
    expect(
      await writeLiveTails(db, {
        owner: B,
        tails: [{ sessionId: id, epoch: 1, lines: ['thief'] }],
        ended: [],
      }),
    ).toMatchObject({ written: [] });
    expect(
      await writeLiveTails(db, {
        owner: A,
        tails: [{ sessionId: id, epoch: 0, lines: ['stale'] }],
        ended: [],
      }),
    ).toMatchObject({ written: [] });
    await finishWithOutput(
      db,
      { sessionId: id, epoch: 1, status: 'succeeded', exitCode: 0, now: new Date() },
      { text: 'done\n', totalBytes: 5, truncated: false },
    );
    expect(
      await writeLiveTails(db, {
        owner: A,
        tails: [{ sessionId: id, epoch: 1, lines: ['late'] }],
        ended: [],
      }),
    ).toMatchObject({ written: [] });
    expect(await readLiveTails(db, [{ sessionId: id, epoch: 1, seq: 0 }])).toEqual([]);
  });

  it("a later epoch's tail is not replaced by an earlier one, and a reader at the old epoch gets nothing", async () => {
    const { db } = getDb();
    const id = await running(A);
    await writeLiveTails(db, {
      owner: A,
      tails: [{ sessionId: id, epoch: 1, lines: ['a1'] }],
      ended: [],
    });
    // Adopted by B: the claim moves the row to epoch 2 under B.
    await sql`UPDATE sessions SET epoch = 2, owner_node = ${B} WHERE id = ${id}`.execute(db);
    await writeLiveTails(db, {
      owner: B,
      tails: [{ sessionId: id, epoch: 2, lines: ['b2'] }],
      ended: [],
    });
    // A, fenced out, still thinks it runs at epoch 1: refused by the session's row.
    expect(
      await writeLiveTails(db, {
        owner: A,
        tails: [{ sessionId: id, epoch: 1, lines: ['a1 again'] }],
        ended: [],
      }),
    ).toMatchObject({ written: [] });
    expect(await readLiveTails(db, [{ sessionId: id, epoch: 1, seq: 0 }])).toEqual([]);
    expect((await readLiveTails(db, [{ sessionId: id, epoch: 2, seq: 0 }]))[0]?.lines).toEqual([
      'b2',
    ]);
    // A's delete of what it believes is its row leaves B's.
    await writeLiveTails(db, { owner: A, tails: [], ended: [id] });
    expect(await readLiveTails(db, [{ sessionId: id, epoch: 2, seq: 0 }])).toHaveLength(1);
    await writeLiveTails(db, { owner: B, tails: [], ended: [id] });
    expect(await readLiveTails(db, [{ sessionId: id, epoch: 2, seq: 0 }])).toEqual([]);
  });

  it('many sessions ride one statement, each read past its own seq', async () => {
    const { db } = getDb();
    const ids = [await running(A, 'u1'), await running(A, 'u2'), await running(A, 'u3')];
    await writeLiveTails(db, {
      owner: A,
      tails: ids.map((sessionId, i) => ({ sessionId, epoch: 1, lines: [`line ${i}`] })),
      ended: [],
    });
    const all = await readLiveTails(
      db,
      ids.map((sessionId) => ({ sessionId, epoch: 1, seq: 0 })),
    );
    expect(all.map((t) => t.lines[0]).sort()).toEqual(['line 0', 'line 1', 'line 2']);
    const seqOf = new Map(all.map((t) => [t.sessionId, t.seq]));
    await writeLiveTails(db, {
      owner: A,
      tails: [{ sessionId: ids[1] ?? '', epoch: 1, lines: ['moved'] }],
      ended: [],
    });
    const changed = await readLiveTails(
      db,
      ids.map((sessionId) => ({ sessionId, epoch: 1, seq: seqOf.get(sessionId) ?? 0 })),
    );
    expect(changed.map((t) => [t.sessionId, t.lines])).toEqual([[ids[1], ['moved']]]);
  });

  it('stores what a text column cannot hold as U+FFFD, and goes with its session when retention prunes it', async () => {
    const { db } = getDb();
    const id = await running(A);
    await writeLiveTails(db, {
      owner: A,
      tails: [{ sessionId: id, epoch: 1, lines: ['nul\u0000here', 'half \uD83D'] }],
      ended: [],
    });
    expect((await readLiveTails(db, [{ sessionId: id, epoch: 1, seq: 0 }]))[0]?.lines).toEqual([
      'nul\uFFFDhere',
      'half \uFFFD',
    ]);
    // Ended, its writer died before deleting the row: the prune takes it with the session.
    await finishWithOutput(
      db,
      {
        sessionId: id,
        epoch: 1,
        status: 'succeeded',
        exitCode: 0,
        now: new Date('2026-01-01T00:00:00Z'),
      },
      { text: 'x\n', totalBytes: 2, truncated: false },
    );
    await sql`UPDATE tasks SET created_at = '2026-01-01T00:00:00Z'`.execute(db);
    await sql`UPDATE sessions SET finished_at = '2026-01-01T00:00:00Z', updated_at = '2026-01-01T00:00:00Z'`.execute(
      db,
    );
    expect(
      await pruneFinished(db, { before: new Date('2026-02-01T00:00:00Z'), limit: 10 }),
    ).toHaveLength(1);
    const left = await sql<{ n: number }>`SELECT count(*)::int AS n FROM live_tails`.execute(db);
    expect(left.rows[0]?.n).toBe(0);
  });

  it("writes nothing while no other boot's board is watched, and says so; deletes still go", async () => {
    const { db } = getDb();
    const id = await running(A);
    await writeLiveTails(db, {
      owner: A,
      tails: [{ sessionId: id, epoch: 1, lines: ['a'] }],
      ended: [],
    });
    await watcher(db, false);
    // The writer's own row says watched: it does not count.
    await sql`INSERT INTO node_heartbeats (owner, node_id, started_at, beat_at, watching)
      VALUES (${A}, 'node-a', now(), now(), true)`.execute(db);
    expect(
      await writeLiveTails(db, {
        owner: A,
        tails: [{ sessionId: id, epoch: 1, lines: ['b'] }],
        ended: [],
      }),
    ).toEqual({ written: [], watched: false });
    expect((await readLiveTails(db, [{ sessionId: id, epoch: 1, seq: 0 }]))[0]?.lines).toEqual([
      'a',
    ]);
    await writeLiveTails(db, { owner: A, tails: [], ended: [id] });
    expect(await readLiveTails(db, [{ sessionId: id, epoch: 1, seq: 0 }])).toEqual([]);
    await watcher(db, true);
    expect(
      await writeLiveTails(db, {
        owner: A,
        tails: [{ sessionId: id, epoch: 1, lines: ['c'] }],
        ended: [],
      }),
    ).toEqual({ written: [id], watched: true });
  });

  it('refuses bad input with a ValidationError naming the field', async () => {
    const { db } = getDb();
    const id = await running(A);
    await expect(
      writeLiveTails(db, { owner: 'no-at', tails: [], ended: [] }),
    ).rejects.toMatchObject({ field: 'owner' });
    await expect(
      writeLiveTails(db, {
        owner: A,
        tails: [{ sessionId: id, epoch: 1, lines: ['x'.repeat(501)] }],
        ended: [],
      }),
    ).rejects.toBeInstanceOf(ValidationError);
    await expect(
      writeLiveTails(db, {
        owner: A,
        tails: [{ sessionId: id, epoch: 1, lines: Array(21).fill('x') }],
        ended: [],
      }),
    ).rejects.toMatchObject({ field: 'tails.0.lines' });
    await expect(
      readLiveTails(db, [{ sessionId: 'ses_x', epoch: 1, seq: 0 }]),
    ).rejects.toMatchObject({ field: 'sessions.0.sessionId' });
    expect(await readLiveTails(db, [])).toEqual([]);
  });
});
