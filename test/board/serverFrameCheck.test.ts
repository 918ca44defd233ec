import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, serverFrameSchema } from '../../src/board/boardProtocol.js';
import * as mod from '../../src/board/serverFrameCheck.js';
import { readServerFrame, ServerFrameError } from '../../src/board/serverFrameCheck.js';
import { queuedCard } from '../client/clientHarness.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/board/serverFrameCheck.ts', import.meta.url), mod);

const int = fc.integer({ min: -5, max: 1_000_000 });
const iso = fc.constantFrom('2026-11-01T10:00:00.000Z', '2026-11-01T10:00:05.250Z');
const counts = fc.record({ queued: int, running: int, done: int, failed: int });
const atCap = fc.option(fc.record({ running: int, max: int }));
const card = fc
  .record(
    {
      taskId: fc.string(),
      userId: fc.string(),
      title: fc.string(),
      column: fc.constantFrom('queued', 'running', 'done', 'failed'),
      sessionId: fc.string(),
      attempt: int,
      status: fc.constantFrom('queued', 'running', 'succeeded', 'failed', 'cancelled'),
      queued: fc.option(
        fc.record({ position: int, since: iso, atCap }, { requiredKeys: ['position', 'since'] }),
      ),
      running: fc.option(
        fc.record(
          { since: iso, until: fc.option(iso, { nil: null }) },
          { requiredKeys: ['since'] },
        ),
      ),
      failure: fc.option(fc.record({ reason: fc.string(), recoverable: fc.boolean() })),
      exitCode: fc.option(int),
      lastOutput: fc.array(fc.string(), { maxLength: 3 }),
      updatedAt: iso,
      previous: fc.option(fc.record({ attempt: int, reason: fc.string() })),
      timeLimitMs: fc.option(int),
    },
    { requiredKeys: ['taskId', 'userId', 'title', 'column', 'sessionId', 'attempt', 'status'] },
  )
  .map((c) => ({ ...queuedCard('x'), ...c }));
const cards = fc.array(card, { maxLength: 4 });

/** Every frame the server may send. */
const frame: fc.Arbitrary<unknown> = fc.oneof(
  fc.record({
    type: fc.constant('hello'),
    v: fc.constant(1),
    userId: fc.option(fc.string()),
    heartbeatMs: fc.double({ noNaN: true, noDefaultInfinity: true }),
  }),
  fc.record({
    type: fc.constant('snapshot'),
    epoch: fc.string(),
    seq: int,
    counts,
    users: fc.array(fc.string(), { maxLength: 3 }),
    cards,
  }),
  fc.record(
    {
      type: fc.constant('update'),
      seq: int,
      counts,
      users: fc.array(fc.string(), { maxLength: 3 }),
      cards,
      positions: fc.dictionary(fc.string({ maxLength: 4 }), int, { maxKeys: 3 }),
      atCap: fc.dictionary(fc.string({ maxLength: 4 }), atCap, { maxKeys: 3 }),
      removed: fc.array(fc.string(), { maxLength: 3 }),
    },
    { requiredKeys: ['type', 'seq', 'cards', 'removed'] },
  ),
  fc.record({ type: fc.constant('pong'), id: fc.string() }),
  fc.record({
    type: fc.constant('error'),
    code: fc.constantFrom(...ERROR_CODES),
    message: fc.string(),
  }),
);

/** Every place in `v` a value sits at, as a path of keys. */
function paths(v: unknown, at: Array<string | number> = []): Array<Array<string | number>> {
  if (typeof v !== 'object' || v === null) return [at];
  const keys = Array.isArray(v) ? v.map((_, i) => i) : Object.keys(v);
  return [at, ...keys.flatMap((k) => paths((v as Record<string, unknown>)[k], [...at, k]))];
}

type Edit = 'replace' | 'delete' | 'extra';

/** `v` with one thing broken (or not: a replacement may be a valid value). */
function broken(v: unknown, pick: number, edit: Edit, value: unknown): unknown {
  const copy = structuredClone(v);
  const all = paths(copy);
  const path = all[pick % all.length]!;
  if (path.length === 0) return edit === 'replace' ? value : copy;
  let parent = copy as Record<string | number, unknown>;
  for (const k of path.slice(0, -1)) parent = parent[k] as Record<string | number, unknown>;
  const last = path.at(-1)!;
  if (edit === 'replace') parent[last] = value;
  else if (edit === 'delete' && !Array.isArray(parent)) delete parent[last];
  else if (typeof parent[last] === 'object' && parent[last] !== null)
    (parent[last] as Record<string, unknown>).extra = value;
  return copy;
}

function byZod(v: unknown) {
  const r = serverFrameSchema.safeParse(v);
  return r.success ? { ok: true, frame: r.data } : { ok: false };
}

function byCheck(v: unknown) {
  try {
    return { ok: true, frame: readServerFrame(v) };
  } catch (err) {
    expect(err).toBeInstanceOf(ServerFrameError);
    return { ok: false };
  }
}

describe('reading a server frame', () => {
  test.prop([frame], { numRuns: 300 })('takes every valid frame as the schema does', (f) => {
    expect(byCheck(f)).toEqual(byZod(f));
    expect(byCheck(f).ok).toBe(true);
  });

  test.prop(
    [
      frame,
      fc.nat(),
      fc.constantFrom<Edit>('replace', 'delete', 'extra'),
      fc.jsonValue({ maxDepth: 2 }),
    ],
    { numRuns: 1000 },
  )('refuses what the schema refuses, and keeps what it keeps', (f, pick, edit, value) => {
    const v = broken(f, pick, edit, value);
    expect(byCheck(v)).toEqual(byZod(v));
  });

  it('keeps a card’s atCap and an update’s atCap map, and takes cards without them', () => {
    const capped = {
      ...queuedCard('t1'),
      queued: { position: 1, since: 'x', atCap: { running: 1, max: 1 } },
    };
    const update = { type: 'update', seq: 2, cards: [capped, queuedCard('t2')], removed: [] };
    expect(readServerFrame({ ...update, atCap: { t3: null, t4: { running: 2, max: 2 } } })).toEqual(
      {
        ...update,
        atCap: { t3: null, t4: { running: 2, max: 2 } },
      },
    );
    expect(() => readServerFrame({ ...update, atCap: { t3: { running: 1 } } })).toThrow(
      'atCap.t3.max: expected an integer, got undefined',
    );
  });

  it('names the field that is wrong', () => {
    const bad = { ...queuedCard('t1'), queued: { position: 'first', since: 'x' } };
    const snapshot = { type: 'snapshot', epoch: 'e', seq: 1, counts: {}, users: [], cards: [] };
    expect(() => readServerFrame({ ...snapshot, cards: [queuedCard('t0'), bad] })).toThrow(
      'counts.queued: expected an integer, got undefined',
    );
    const counts = { queued: 1, running: 0, done: 0, failed: 0 };
    expect(() => readServerFrame({ ...snapshot, counts, cards: [queuedCard('t0'), bad] })).toThrow(
      'cards[1].queued.position: expected an integer, got "first"',
    );
    expect(() => readServerFrame({ type: 'welcome' })).toThrow(
      'type: expected one of hello, snapshot, update, pong, error, got "welcome"',
    );
    expect(() => readServerFrame([])).toThrow('type: expected one of');
  });
});
