/**
 * The stored end of an output (migration 22): written with the output by
 * every writer (the tick's finish, `finishRun`, `finishWithOutput`), equal to what
 * Postgres's `right` and `length` say of the text, and read instead of the
 * text by every reader of a tail; a row written before has none and is read
 * from its text as before.
 */
import { fc, test } from '@fast-check/vitest';
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { RESTORE_TAIL_CHARS, readOutputTails } from '../../src/actors/runtimeBoardRows.js';
import { readChanges } from '../../src/db/dispatchReads.js';
import { finishRun } from '../../src/db/finishRun.js';
import { finishWithOutput } from '../../src/db/sessionOutputs.js';
import { claim } from '../../src/db/sessionTransitions.js';
import * as stored from '../../src/db/storedTail.js';
import { describeEachEngine } from '../support/databases.js';
import { runDocExamples } from '../support/docExamples.js';
import { enqueue } from './fixtures.js';
import { finishOp, handleOp, ref, ticker } from './tickFixtures.js';

runDocExamples(new URL('../../src/db/storedTail.ts', import.meta.url), stored);
const { OUTPUT_TAIL_CHARS, storedTail } = stored;

it('keeps at least what the board asks for', () => {
  expect(RESTORE_TAIL_CHARS).toBeLessThanOrEqual(OUTPUT_TAIL_CHARS);
});

// Code points as Postgres counts them: ASCII, accents, astral emoji, lone halves never made.
const text = fc.string({ unit: fc.constantFrom('a', '\n', 'é', '🙂', '中'), maxLength: 200 });

describeEachEngine('stored output tails', (getDb) => {
  test.prop([fc.array(text, { minLength: 1, maxLength: 5 })], { numRuns: 15 })(
    'storedTail agrees with right() and length() on the text',
    async (texts) => {
      const { db } = getDb();
      for (const t of texts) {
        // Longer than the tail, sometimes: repeat it past OUTPUT_TAIL_CHARS.
        const whole = t.length > 0 && t.length % 3 === 0 ? t.repeat(OUTPUT_TAIL_CHARS / 4) : t;
        const { rows } = await sql<{ tail: string; whole: boolean }>`
          SELECT right(${whole}::text, ${OUTPUT_TAIL_CHARS}) AS tail,
            length(${whole}::text) <= ${OUTPUT_TAIL_CHARS} AS whole`.execute(db);
        expect(storedTail(whole)).toEqual({ tail: rows[0]?.tail, tail_whole: rows[0]?.whole });
      }
    },
  );

  it('both writers store the tail, and the readers read it, not the text', async () => {
    const { db } = getDb();
    const long = `${'x'.repeat(OUTPUT_TAIL_CHARS)}the end\n`;
    // The tick's finish.
    const tick = ticker(db);
    const e = await tick([
      {
        op: 'enqueue',
        ref: ref(),
        taskId: `tsk_${'a'.repeat(32)}`,
        sessionId: `ses_${'a'.repeat(32)}`,
        userId: 'ann',
        title: 'a',
        spec: { image: 'i', command: ['c'] },
      },
    ]);
    const since = e.tick;
    const granted = await tick([], { want: 1 });
    const s = granted.granted[0]!.session;
    await tick([handleOp(s.id, s.epoch)]);
    await tick([
      finishOp(s.id, s.epoch, {
        output: { text: long, totalBytes: long.length, truncated: false },
      }),
    ]);
    // finishWithOutput.
    const other = await enqueue(db, 'bob', new Date());
    await claim(db, { sessionId: other.session.id, epoch: 0, owner: 'n', now: new Date() });
    await finishWithOutput(
      db,
      { sessionId: other.session.id, epoch: 1, status: 'succeeded', exitCode: 0, now: new Date() },
      { text: 'short\n', totalBytes: 6, truncated: false },
    );
    // finishRun.
    const third = await enqueue(db, 'cat', new Date());
    await claim(db, { sessionId: third.session.id, epoch: 0, owner: 'n', now: new Date() });
    await finishRun(
      db,
      { sessionId: third.session.id, epoch: 1, status: 'succeeded', exitCode: 0, now: new Date() },
      {
        text: '🙂'.repeat(OUTPUT_TAIL_CHARS + 1),
        totalBytes: 4 * (OUTPUT_TAIL_CHARS + 1),
        truncated: false,
      },
      'done',
    );
    const rows = await db
      .selectFrom('session_outputs')
      .select(['session_id', 'tail', 'tail_whole'])
      .orderBy('session_id')
      .execute();
    expect(rows.map((r) => [r.session_id, r.tail?.length, r.tail_whole])).toEqual(
      [
        [s.id, OUTPUT_TAIL_CHARS, false],
        [other.session.id, 6, true],
        // Code points, as Postgres counts: each emoji is two UTF-16 units.
        [third.session.id, 2 * OUTPUT_TAIL_CHARS, false],
      ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    );
    // The readers take the stored tail: replace the text behind it, and they do not see it.
    await sql`UPDATE session_outputs SET text = 'replaced'`.execute(db);
    const tails = await readOutputTails(db, [s.id, other.session.id]);
    expect(tails.find((t) => t.sessionId === s.id)).toEqual({
      sessionId: s.id,
      tail: long.slice(-RESTORE_TAIL_CHARS),
      whole: false,
    });
    expect(tails.find((t) => t.sessionId === other.session.id)?.tail).toBe('short\n');
    const changes = await readChanges(db, since, { tailChars: 100 });
    const mine = changes.sessions.find((c) => c.session.id === s.id);
    expect(mine?.output).toEqual({ tail: long.slice(-100), whole: false });
    // A row written before migration 22 (no tail) is read from its text.
    await sql`UPDATE session_outputs SET tail = NULL, tail_whole = NULL`.execute(db);
    expect((await readOutputTails(db, [other.session.id]))[0]?.tail).toBe('replaced');
  });
});
