/**
 * One op's check (src/db/validateTickOp.ts): done once per op object, and
 * what the tick sends is the op as it was checked.
 */
import { describe, expect, it } from 'vitest';
import { newId } from '../../src/db/ids.js';
import { tickPayload } from '../../src/db/tickInput.js';
import { validateTickOp } from '../../src/db/validateTickOp.js';
import { tickHead } from './tickFixtures.js';

const enqueue = () => ({
  op: 'enqueue' as const,
  ref: '1',
  taskId: newId('task'),
  sessionId: newId('session'),
  userId: 'u1',
  title: 'build',
  spec: { image: 'node:20', command: ['npm', 'test'] },
});

describe('validateTickOp', () => {
  it('checks an op object once: its tick reuses what the submit check returned', () => {
    const op = enqueue();
    const first = validateTickOp(op);
    expect(validateTickOp(op, 3)).toBe(first);
  });

  it('sends the op as it was checked, whatever its caller does with the object afterwards', () => {
    const op = enqueue();
    validateTickOp(op);
    op.title = '';
    op.spec.command.push('--bail');
    const [row] = tickPayload(tickHead([op])).enqueues as Array<{ title: string; spec: unknown }>;
    expect(row?.title).toBe('build');
    expect(row?.spec).toEqual({ image: 'node:20', command: ['npm', 'test'] });
  });

  it('still rejects an op that was never checked', () => {
    const op = { ...enqueue(), title: '' };
    expect(() => tickPayload(tickHead([op]))).toThrow(/ops\.0\.title/);
  });
});
