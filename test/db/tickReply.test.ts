/**
 * The reply's row parsers (src/db/tickReply.ts): a timestamp text seen
 * again is parsed once, and every field still gets a Date of its own; a
 * row sent as an array of src/db/sql/rowJson.ts's columns reads as the
 * same row sent as an object; a change row's task is a summary, whose
 * run spec may be left out, while a grant's task must carry one.
 */
import { describe, expect, it } from 'vitest';
import { CorruptRowError } from '../../src/db/errors.js';
import { SESSION_COLUMNS, TASK_COLUMNS } from '../../src/db/sql/rowJson.js';
import {
  changesFromJson,
  sessionFromJson,
  taskFromJson,
  taskSummaryFromJson,
} from '../../src/db/tickReply.js';
import { sessionRowAt } from './rowFixtures.js';

const at = '2026-12-02T03:38:32.595+00:00';
const row = (over: Record<string, unknown> = {}) => ({ ...sessionRowAt(at), ...over });

describe('sessionFromJson', () => {
  it('gives each field a Date of its own, though the text repeats', () => {
    const a = sessionFromJson(row());
    const b = sessionFromJson(row());
    expect(a.enqueuedAt.getTime()).toBe(Date.parse(at));
    expect(a.claimedAt).toEqual(a.enqueuedAt);
    expect(a.claimedAt).not.toBe(a.enqueuedAt);
    expect(b.updatedAt).not.toBe(a.updatedAt);
    a.updatedAt.setTime(0);
    expect(b.updatedAt.getTime()).toBe(Date.parse(at));
  });

  it('still refuses a timestamp that names no time, after a good one', () => {
    sessionFromJson(row());
    expect(() => sessionFromJson(row({ updated_at: 'not a time' }))).toThrow(CorruptRowError);
    expect(() => sessionFromJson(row({ updated_at: 'not a time' }))).toThrow(/updated_at/);
    expect(
      sessionFromJson(row({ updated_at: '2026-12-02T03:38:33+00:00' })).updatedAt.getTime(),
    ).toBe(Date.parse('2026-12-02T03:38:33+00:00'));
  });
});

describe('a row as an array', () => {
  const asArray = (r: Record<string, unknown>) => SESSION_COLUMNS.map((c) => r[c] ?? null);

  it('reads as the same row sent as an object', () => {
    const r = { ...row({ turn: 4, join_seq: 2 }) };
    expect(sessionFromJson(asArray(r))).toEqual(sessionFromJson(r));
  });

  it('is refused with a column missing or one too many, and names the bad field', () => {
    const a = asArray(row());
    expect(() => sessionFromJson(a.slice(1))).toThrow(CorruptRowError);
    expect(() => sessionFromJson([...a, 1])).toThrow(CorruptRowError);
    const bad = [...a];
    bad[SESSION_COLUMNS.indexOf('epoch')] = 'one';
    expect(() => sessionFromJson(bad)).toThrow(/epoch/);
  });
});

describe('a task with and without its run spec', () => {
  const task = (spec: unknown) =>
    TASK_COLUMNS.map(
      (c) =>
        ({
          id: 'tsk_1',
          user_id: 'alice',
          title: 'a task',
          run_spec: spec,
          board_column: 'queued',
          created_at: at,
          updated_at: at,
        })[c],
    );
  const summary = {
    id: 'tsk_1',
    userId: 'alice',
    title: 'a task',
    column: 'queued',
    createdAt: new Date(at),
    updatedAt: new Date(at),
    timeLimitMs: null,
  };

  it('a change row reads as the summary, spec or not; a grant needs its spec', () => {
    const spec = { image: 'alpine:3', command: ['true'] };
    expect(taskSummaryFromJson(task(null), null)).toEqual(summary);
    expect(taskSummaryFromJson(task(spec), null)).toEqual(summary);
    expect(taskFromJson(task(spec), null)).toEqual({ ...summary, spec });
    expect(() => taskFromJson(task(null), null)).toThrow(/run_spec/);
    const [change] = changesFromJson([{ session: row(), task: task(null) }], 'changes');
    expect(change?.task).toEqual(summary);
  });

  it("a change's task takes the limit sent beside its row; a bad one is a corrupt row", () => {
    const [limited, none] = changesFromJson(
      [
        { session: row(), task: task(null), limit: 60_000 },
        { session: row(), task: task(null), limit: null },
      ],
      'changes',
    );
    expect(limited?.task).toEqual({ ...summary, timeLimitMs: 60_000 });
    expect(none?.task).toEqual(summary);
    for (const limit of ['soon', 999, 1.5e3 + 0.5])
      expect(() =>
        changesFromJson([{ session: row(), task: task(null), limit }], 'changes'),
      ).toThrow(CorruptRowError);
  });
});
