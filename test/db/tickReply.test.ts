/**
 * The reply's row parsers (src/db/tickReply.ts): a timestamp text seen
 * again is parsed once, and every field still gets a Date of its own.
 */
import { describe, expect, it } from 'vitest';
import { CorruptRowError } from '../../src/db/errors.js';
import { sessionFromJson } from '../../src/db/tickReply.js';

const at = '2026-12-02T03:38:32.595+00:00';
const row = (over: Record<string, unknown> = {}) => ({
  id: 'ses_0123456789abcdef0123456789abcdef',
  task_id: 'tsk_0123456789abcdef0123456789abcdef',
  user_id: 'u1',
  kind: 'run',
  status: 'running',
  attempt: 1,
  enqueued_at: at,
  claimed_at: at,
  backend: null,
  handle: null,
  owner_node: 'n@1',
  epoch: 1,
  started_at: null,
  finished_at: null,
  exit_code: null,
  failure_reason: null,
  user_recoverable: false,
  updated_at: at,
  ...over,
});

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
