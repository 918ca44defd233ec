import { describe, expect, it } from 'vitest';
import { CorruptRowError } from '../../src/db/errors.js';
import { newId } from '../../src/db/ids.js';
import { toSession, toSessionEvent, toTask, toTaskSummary } from '../../src/db/rows.js';
import { sessionRowAt } from './rowFixtures.js';

const at = new Date('2026-07-14T10:00:00Z');
const sessionRow = sessionRowAt(at);

function corruptField(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(CorruptRowError);
    expect((error as CorruptRowError).code).toBe('DB_CORRUPT_ROW');
    return (error as CorruptRowError).field;
  }
  throw new Error('expected a CorruptRowError');
}

describe('row readers', () => {
  it('map a good session row to camelCase', () => {
    expect(toSession(sessionRow)).toMatchObject({ owner: 'node-a', epoch: 1, claimedAt: at });
  });

  it('name the corrupt field of a session row', () => {
    expect(corruptField(() => toSession({ ...sessionRow, status: 'paused' }))).toBe('status');
    expect(corruptField(() => toSession({ ...sessionRow, epoch: '1' }))).toBe('epoch');
    expect(corruptField(() => toSession({ ...sessionRow, backend: 'k8s' }))).toBe('backend');
    expect(
      corruptField(() => toSession({ ...sessionRow, enqueued_at: new Date(Number.NaN) })),
    ).toBe('enqueued_at');
    expect(corruptField(() => toSession(null))).toBe('(row)');
  });

  it('validate the run spec inside a task row', () => {
    const task = {
      id: newId('task'),
      user_id: 'alice',
      title: 't',
      run_spec: { image: 'busybox', command: 'echo hi' },
      board_column: 'backlog',
      created_at: at,
      updated_at: at,
    };
    expect(corruptField(() => toTask(task))).toBe('run_spec.command');
  });

  it("read a task row without its run spec as the board's summary, every other field checked", () => {
    const { run_spec: _spec, ...row } = {
      id: newId('task'),
      user_id: 'alice',
      title: 't',
      run_spec: null,
      board_column: 'queued',
      created_at: at,
      updated_at: at,
      time_limit_ms: 60_000,
    };
    const summary = toTaskSummary(row);
    expect(summary).toEqual({
      id: row.id,
      userId: 'alice',
      title: 't',
      column: 'queued',
      createdAt: at,
      updatedAt: at,
      timeLimitMs: 60_000,
    });
    expect('spec' in summary).toBe(false);
    expect(toTaskSummary({ ...row, time_limit_ms: null }).timeLimitMs).toBeNull();
    expect(corruptField(() => toTaskSummary({ ...row, title: 7 }))).toBe('title');
    expect(corruptField(() => toTaskSummary({ ...row, updated_at: 'soon' }))).toBe('updated_at');
    for (const bad of [999, 1_500.5, '60000', undefined])
      expect(corruptField(() => toTaskSummary({ ...row, time_limit_ms: bad }))).toBe(
        'time_limit_ms',
      );
  });

  it('validate event rows', () => {
    const event = {
      id: '1',
      session_id: sessionRow.id,
      from_status: null,
      to_status: 'queued',
      reason: null,
      node: null,
      epoch: 0,
      at,
    };
    expect(toSessionEvent(event)).toMatchObject({ from: null, to: 'queued' });
    expect(corruptField(() => toSessionEvent({ ...event, to_status: 'x' }))).toBe('to_status');
  });
});
