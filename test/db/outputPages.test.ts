import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';
import { expect, it } from 'vitest';
import { runOutputFrom } from '../../src/containers/wrapper.js';
import { OUTPUT_CHUNK_BYTES } from '../../src/db/outputChunkBytes.js';
import { readOutputPage, readOutputPieces } from '../../src/db/outputPages.js';
import { finishWithOutput } from '../../src/db/sessionOutputs.js';
import { claim } from '../../src/db/sessionTransitions.js';
import type { Db } from '../../src/db/transaction.js';
import { describeEachEngine, raceTest } from '../support/databases.js';
import { enqueue, steppingClock } from './fixtures.js';
import { enqueueOp, finishOp, ticker } from './tickFixtures.js';

/** Counts the bytes of every byte column and text column the store answers with. */
class BytesRead implements KyselyPlugin {
  bytes = 0;
  queries = 0;
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.queries += 1;
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    for (const row of args.result.rows) {
      for (const v of Object.values(row)) {
        if (v instanceof Uint8Array) this.bytes += v.byteLength;
        else if (typeof v === 'string') this.bytes += Buffer.byteLength(v);
      }
    }
    return args.result;
  }
}

/** 400,000 numbered lines (~3 MB): enough pieces that a whole read shows. */
const LINES = 400_000;
const lineOf = (i: number) => `line ${i} ${'é'.repeat(i % 3)}`;
const BIG = `${Array.from({ length: LINES }, (_, i) => lineOf(i)).join('\n')}\n`;

async function finished(db: Db, userId: string, text: string) {
  const now = steppingClock();
  const { task, session } = await enqueue(db, userId, now());
  await claim(db, { sessionId: session.id, epoch: 0, owner: 'node-a', now: now() });
  await finishWithOutput(
    db,
    { sessionId: session.id, epoch: 1, status: 'succeeded', exitCode: 0, now: now() },
    { text, totalBytes: Buffer.byteLength(text), truncated: false },
  );
  return { actor: userId, taskId: task.id, sessionId: session.id };
}

async function pieceCount(db: Db, sessionId: string): Promise<number> {
  const row = await db
    .selectFrom('session_output_chunks')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('session_id', '=', sessionId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describeEachEngine('output pages', (getDb, engine) => {
  it('pages a large output exactly: at an offset, the last page, beyond the end', async () => {
    const { db } = getDb();
    const ref = await finished(db, 'alice', BIG);
    const at = await readOutputPage(db, ref, { from: 123_456, count: 3 });
    expect(at).toEqual({
      sessionId: ref.sessionId,
      from: 123_456,
      lines: [lineOf(123_456), lineOf(123_457), lineOf(123_458)],
      totalLines: LINES,
      totalBytes: Buffer.byteLength(BIG),
      truncated: false,
    });
    expect((await readOutputPage(db, ref, { from: 0, count: 2 }))?.lines).toEqual([
      lineOf(0),
      lineOf(1),
    ]);
    const last = await readOutputPage(db, ref, { from: undefined, count: 4 });
    expect([last?.from, last?.lines]).toEqual([
      LINES - 4,
      [lineOf(LINES - 4), lineOf(LINES - 3), lineOf(LINES - 2), lineOf(LINES - 1)],
    ]);
    const end = await readOutputPage(db, ref, { from: LINES - 2, count: 10 });
    expect(end?.lines).toEqual([lineOf(LINES - 2), lineOf(LINES - 1)]);
    expect((await readOutputPage(db, ref, { from: LINES, count: 10 }))?.lines).toEqual([]);
    expect((await readOutputPage(db, ref, { from: LINES + 50, count: 1 }))?.from).toBe(LINES + 50);
    // Every line of a piece's edge, and a page across pieces, read whole.
    const wide = await readOutputPage(db, ref, { from: 1000, count: 5000 });
    expect(wide?.lines).toEqual(Array.from({ length: 5000 }, (_, i) => lineOf(1000 + i)));
    // Another user reads nothing, as if there were none.
    expect(await readOutputPage(db, { ...ref, actor: 'bob' }, { from: 0, count: 1 })).toBeNull();
    expect(await readOutputPage(db, { ...ref, actor: null }, { from: 7, count: 1 })).toMatchObject({
      lines: [lineOf(7)],
    });
  });

  it('reads a bounded amount for a page, never the text', async () => {
    const { db } = getDb();
    const ref = await finished(db, 'alice', BIG);
    const probe = new BytesRead();
    const watched = db.withPlugin(probe);
    // The first read indexes the output, on the server: two statements more,
    // and still no text sent to the node.
    await readOutputPage(watched, ref, { from: 0, count: 1 });
    expect(probe.bytes).toBeLessThanOrEqual(3 * OUTPUT_CHUNK_BYTES + 200);
    expect(probe.queries).toBeLessThanOrEqual(6);
    for (const range of [
      { from: 300_000, count: 1 },
      { from: undefined, count: 1 },
      { from: 0, count: 1 },
    ]) {
      probe.bytes = 0;
      probe.queries = 0;
      await readOutputPage(watched, ref, range);
      // A piece to find the line, a few to read it: never the ~3 MB text.
      expect(probe.bytes).toBeLessThanOrEqual(3 * OUTPUT_CHUNK_BYTES + 200);
      expect(probe.queries).toBeLessThanOrEqual(4);
    }
  });

  it('bounds a page by bytes: a long line is cut, a last page keeps the lines at the end', async () => {
    const { db } = getDb();
    const long = 'x'.repeat(300_000);
    const ref = await finished(db, 'alice', `a\n${long}\nb\nc\n${long}y`);
    const budget = 100_000;
    const cut = await readOutputPage(db, ref, { from: 0, count: 10 }, budget);
    expect(cut?.lines).toEqual(['a']);
    const alone = await readOutputPage(db, ref, { from: 1, count: 10 }, budget);
    expect(alone?.lines).toEqual([`${'x'.repeat(budget)}…`]);
    expect((await readOutputPage(db, ref, { from: 2, count: 2 }, budget))?.lines).toEqual([
      'b',
      'c',
    ]);
    const last = await readOutputPage(db, ref, { from: undefined, count: 3 }, budget);
    expect([last?.from, last?.lines]).toEqual([4, [`${'x'.repeat(budget)}…`]]);
    const lastSmall = await readOutputPage(db, ref, { from: undefined, count: 5 }, 400_000);
    expect([lastSmall?.from, lastSmall?.lines.length]).toEqual([2, 3]);
    const empty = await finished(db, 'alice', '');
    expect(await readOutputPage(db, empty, { from: undefined, count: 5 })).toMatchObject({
      from: 0,
      lines: [],
      totalLines: 0,
    });
  });

  it('keeps the byte count a run wrote through NUL, invalid UTF-8 and a character split over pieces', async () => {
    const { db } = getDb();
    // What a run wrote: a NUL, a lone 0xff, a euro sign straddling the
    // first piece boundary, and a euro cut off at the very end.
    const head = Buffer.from('a\u0000b\xffc\n', 'latin1');
    const fill = Buffer.alloc(OUTPUT_CHUNK_BYTES - head.length - 1, 0x78);
    const raw = Buffer.concat([
      head,
      fill,
      Buffer.from('€ok\n', 'utf8'),
      Buffer.from([0xff, 0x0a, 0xe2, 0x82]),
    ]);
    // As every backend reads it back (src/containers/wrapper.ts).
    const read = runOutputFrom(raw, raw.length);
    const stored = read.text.replaceAll('\u0000', '\uFFFD');
    const lines = stored.split('\n');
    const now = steppingClock();
    const viaFinish = await enqueue(db, 'ann', now());
    await claim(db, { sessionId: viaFinish.session.id, epoch: 0, owner: 'n', now: now() });
    await finishWithOutput(
      db,
      { sessionId: viaFinish.session.id, epoch: 1, status: 'succeeded', exitCode: 0, now: now() },
      read,
    );
    // The runner's path: the tick's finish.
    const t = ticker(db, { defaultUserCap: 1 });
    const { granted } = await t([enqueueOp('bo')], { want: 1 });
    const g = granted[0]?.session;
    if (g === undefined) throw new Error('not granted');
    await t([finishOp(g.id, g.epoch, { output: read })]);
    for (const [actor, taskId, sessionId] of [
      ['ann', viaFinish.task.id, viaFinish.session.id],
      ['bo', g.taskId, g.id],
    ] as const) {
      const ref = { actor, taskId, sessionId };
      const page = await readOutputPage(db, ref, { from: 0, count: 10 });
      expect(page?.totalBytes, actor).toBe(raw.length);
      expect(page?.lines, actor).toEqual(lines);
      expect(page?.totalLines, actor).toBe(lines.length);
      // The line straddling the piece boundary, read from its own start.
      expect((await readOutputPage(db, ref, { from: 1, count: 1 }))?.lines).toEqual([
        `${'x'.repeat(fill.length)}€ok`,
      ]);
      const parts: Buffer[] = [];
      for await (const part of (await readOutputPieces(db, ref, 1)) ?? []) parts.push(part);
      expect(Buffer.concat(parts).toString('utf8'), actor).toBe(stored);
    }
  });

  it('downloads the whole output in bounded parts', async () => {
    const { db } = getDb();
    const ref = await finished(db, 'alice', BIG);
    const parts = await readOutputPieces(db, ref, 8);
    const seen: Buffer[] = [];
    for await (const part of parts ?? []) seen.push(part);
    expect(Math.max(...seen.map((p) => p.length))).toBeLessThanOrEqual(8 * OUTPUT_CHUNK_BYTES);
    expect(Buffer.concat(seen).toString('utf8')).toBe(BIG);
    expect(await readOutputPieces(db, { ...ref, actor: 'bob' })).toBeNull();
  });

  raceTest(engine)(
    'first readers on several connections at once index an output once, and each reads its page',
    async () => {
      const { db, connectAnother } = getDb();
      const others = [(await connectAnother()).db, (await connectAnother()).db];
      const ref = await finished(db, 'alice', BIG);
      // Four first reads over three pools: each would index the output, and
      // at least two overlap (an index of ~3 MB takes tens of milliseconds).
      const reads = [db, others[0], others[1], others[0]].map((d, i) =>
        readOutputPage(d as Db, ref, { from: 100_000 * i, count: 2 }),
      );
      const pages = await Promise.all(reads);
      expect(pages.map((p) => p?.lines)).toEqual(
        [0, 1, 2, 3].map((i) => [lineOf(100_000 * i), lineOf(100_000 * i + 1)]),
      );
      expect(pages.every((p) => p?.totalLines === LINES)).toBe(true);
      expect(await pieceCount(db, ref.sessionId)).toBe(
        Math.ceil(Buffer.byteLength(BIG) / OUTPUT_CHUNK_BYTES),
      );
      const parts = await readOutputPieces(others[1] as Db, ref, 8);
      const seen: Buffer[] = [];
      for await (const part of parts ?? []) seen.push(part);
      expect(Buffer.concat(seen).toString('utf8')).toBe(BIG);
    },
  );

  it('indexes an output when a page of it is first read, not when it is written', async () => {
    const { db } = getDb();
    const ref = await finished(db, 'alice', 'one\ntwo\nthree');
    // The finish wrote no pieces: its insert rides the tick, under every node's lock.
    expect(await pieceCount(db, ref.sessionId)).toBe(0);
    expect(await readOutputPage(db, ref, { from: undefined, count: 2 })).toMatchObject({
      from: 1,
      lines: ['two', 'three'],
      totalLines: 3,
    });
    expect(await pieceCount(db, ref.sessionId)).toBe(1);
    // Deleting the output (the retention prune) deletes its pieces.
    await db.deleteFrom('session_outputs').where('session_id', '=', ref.sessionId).execute();
    expect(await pieceCount(db, ref.sessionId)).toBe(0);
  });
});
