import { expect, it } from 'vitest';
import { StaleStatusError, ValidationError } from '../../src/db/errors.js';
import * as outputs from '../../src/db/sessionOutputs.js';
import {
  finishWithOutput,
  getSessionOutput,
  SESSION_OUTPUT_LIMIT_BYTES,
} from '../../src/db/sessionOutputs.js';
import { getSession } from '../../src/db/sessionQueries.js';
import { claim, finish, requeue } from '../../src/db/sessionTransitions.js';
import type { Db } from '../../src/db/transaction.js';
import { describeEachEngine } from '../support/databases.js';
import { runDocExamples } from '../support/docExamples.js';
import { enqueue, steppingClock } from './fixtures.js';
import { enqueueOp, finishOp, ticker } from './tickFixtures.js';

runDocExamples(new URL('../../src/db/sessionOutputs.ts', import.meta.url), outputs);

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

async function running(db: Db, userId: string, now: () => Date) {
  const { session } = await enqueue(db, userId, now());
  await claim(db, { sessionId: session.id, epoch: 0, owner: 'node-a', now: now() });
  return session.id;
}

const outputCount = async (db: Db) =>
  Number(
    (
      await db
        .selectFrom('session_outputs')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describeEachEngine('session outputs', (getDb) => {
  it('stores the whole output with the finish, readable only by its user', async () => {
    const { db } = getDb();
    const now = steppingClock();
    const id = await running(db, 'alice', now);
    const at = now();
    const done = await finishWithOutput(
      db,
      { sessionId: id, epoch: 1, status: 'succeeded', exitCode: 0, now: at },
      { text: 'one\ntwo é\n', totalBytes: 11, truncated: false },
    );
    expect(done.status).toBe('succeeded');
    expect(await getSessionOutput(db, { userId: 'alice', sessionId: id })).toEqual({
      sessionId: id,
      text: 'one\ntwo é\n',
      totalBytes: 11,
      truncated: false,
      createdAt: at,
    });
    // Another user's session: not found, exactly like no output at all.
    expect(await getSessionOutput(db, { userId: 'bob', sessionId: id })).toBeNull();
    const bad = await rejection(getSessionOutput(db, { userId: 'alice', sessionId: 'nope' }));
    expect(bad).toBeInstanceOf(ValidationError);
  });

  it('a stale finish writes neither the status nor the output (one transaction)', async () => {
    const { db } = getDb();
    const now = steppingClock();
    const id = await running(db, 'alice', now);
    const error = await rejection(
      finishWithOutput(
        db,
        { sessionId: id, epoch: 0, status: 'succeeded', exitCode: 0, now: now() },
        { text: 'late', totalBytes: 4, truncated: false },
      ),
    );
    expect(error).toBeInstanceOf(StaleStatusError);
    expect((await getSession(db, id)).status).toBe('running');
    expect(await outputCount(db)).toBe(0);
  });

  it('a failed output write rolls the finish back', async () => {
    const { db } = getDb();
    const now = steppingClock();
    const id = await running(db, 'alice', now);
    const at = now();
    await finishWithOutput(
      db,
      { sessionId: id, epoch: 1, status: 'succeeded', exitCode: 0, now: at },
      { text: 'first', totalBytes: 5, truncated: false },
    );
    // A second output row for the session violates the primary key after
    // the finish's CAS already matched: nothing of the second call stays.
    const id2 = await running(db, 'alice', now);
    await db
      .insertInto('session_outputs')
      .values({ session_id: id2, text: 'x', total_bytes: 1, truncated: false, created_at: at })
      .execute();
    await rejection(
      finishWithOutput(
        db,
        { sessionId: id2, epoch: 1, status: 'succeeded', exitCode: 0, now: now() },
        { text: 'second', totalBytes: 6, truncated: false },
      ),
    );
    expect((await getSession(db, id2)).status).toBe('running');
  });

  it('a give-up stores no output: the user gets null, not an empty string', async () => {
    const { db } = getDb();
    const now = steppingClock();
    const id = await running(db, 'alice', now);
    await finish(db, {
      sessionId: id,
      epoch: 1,
      status: 'failed',
      exitCode: null,
      reason: 'container_replaced',
      userRecoverable: true,
      now: now(),
    });
    await requeue(db, { sessionId: id, epoch: 1, now: now() });
    expect(await getSessionOutput(db, { userId: 'alice', sessionId: id })).toBeNull();
  });

  it('an output the backend cut, and one over the limit, are stored cut and marked', async () => {
    const { db } = getDb();
    const now = steppingClock();
    const cutByBackend = await running(db, 'alice', now);
    await finishWithOutput(
      db,
      {
        sessionId: cutByBackend,
        epoch: 1,
        status: 'failed',
        exitCode: 2,
        reason: 'exit_code',
        userRecoverable: false,
        now: now(),
      },
      { text: 'the tail\n', totalBytes: 20_000_000, truncated: true },
    );
    expect(await getSessionOutput(db, { userId: 'alice', sessionId: cutByBackend })).toMatchObject({
      text: '[roundtable: output cut: the last 9 of 20000000 bytes are kept]\nthe tail\n',
      totalBytes: 20_000_000,
      truncated: true,
    });

    const tooLong = await running(db, 'alice', now);
    const line = `${'x'.repeat(1023)}\n`;
    const text = `${line.repeat(SESSION_OUTPUT_LIMIT_BYTES / 1024 + 3)}end\n`;
    await finishWithOutput(
      db,
      { sessionId: tooLong, epoch: 1, status: 'succeeded', exitCode: 0, now: now() },
      { text, totalBytes: Buffer.byteLength(text), truncated: false },
    );
    const stored = await getSessionOutput(db, { userId: 'alice', sessionId: tooLong });
    expect(stored?.truncated).toBe(true);
    expect(stored?.totalBytes).toBe(Buffer.byteLength(text));
    expect(Buffer.byteLength(stored?.text ?? '')).toBeLessThanOrEqual(SESSION_OUTPUT_LIMIT_BYTES);
    expect(stored?.text.startsWith('[roundtable: output cut: the last ')).toBe(true);
    expect(stored?.text.endsWith('x\nend\n')).toBe(true);
  }, 60_000);

  it('a lone surrogate (a backend that cut an emoji in half) is stored as U+FFFD, not a failed tick', async () => {
    const { db } = getDb();
    const output = { text: `${'🙂'.slice(1)} ok \ud83d`, totalBytes: 12, truncated: false };
    const now = steppingClock();
    const id = await running(db, 'alice', now);
    await finishWithOutput(
      db,
      { sessionId: id, epoch: 1, status: 'succeeded', exitCode: 0, now: now() },
      output,
    );
    const t = ticker(db, { defaultUserCap: 1 });
    const { granted } = await t([enqueueOp('bob')], { want: 1 });
    const g = granted[0]?.session;
    if (g === undefined) throw new Error('not granted');
    const [outcome] = (await t([finishOp(g.id, g.epoch, { output })])).outcomes;
    expect(outcome?.kind).toBe('applied');
    for (const [userId, sessionId] of [
      ['alice', id],
      ['bob', g.id],
    ] as const) {
      expect(await getSessionOutput(db, { userId, sessionId })).toMatchObject({
        text: '\uFFFD ok \uFFFD',
        totalBytes: 12,
      });
    }
  });

  it('NUL characters, which Postgres text cannot hold, are stored as U+FFFD', async () => {
    const { db } = getDb();
    const now = steppingClock();
    const id = await running(db, 'alice', now);
    await finishWithOutput(
      db,
      { sessionId: id, epoch: 1, status: 'succeeded', exitCode: 0, now: now() },
      { text: 'a\u0000b', totalBytes: 3, truncated: false },
    );
    expect((await getSessionOutput(db, { userId: 'alice', sessionId: id }))?.text).toBe('a\uFFFDb');
  });
});
