import { describe, expect, it } from 'vitest';
import { newId } from '../../src/db/ids.js';
import * as tickInput from '../../src/db/tickInput.js';
import { tickPayload, validateTickOp } from '../../src/db/tickInput.js';
import { runDocExamples } from '../support/docExamples.js';
import { finishOp, handleOp } from './tickFixtures.js';

runDocExamples(new URL('../../src/db/tickInput.ts', import.meta.url), tickInput);

const enqueue = () => ({
  op: 'enqueue' as const,
  ref: '1',
  taskId: newId('task'),
  sessionId: newId('session'),
  userId: 'u1',
  title: 'build',
  spec: { image: 'node:20', command: ['npm', 'test'] },
});

const head = (ops: unknown[]) => ({
  owner: 'n1@b1',
  now: new Date(0),
  globalCap: 2,
  defaultUserCap: 1,
  want: 0,
  ops: ops as never,
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
    const [row] = tickPayload(head([op])).enqueues as Array<{ title: string; spec: unknown }>;
    expect(row?.title).toBe('build');
    expect(row?.spec).toEqual({ image: 'node:20', command: ['npm', 'test'] });
  });

  it('still rejects an op that was never checked', () => {
    const op = { ...enqueue(), title: '' };
    expect(() => tickPayload(head([op]))).toThrow(/ops\.0\.title/);
  });
});

describe('tickPayload folds a lone handle into the finish of its run', () => {
  // The tick suites' builders, with the ref this test names.
  const handle = (sessionId: string, epoch: number, ref: string) => ({
    ...handleOp(sessionId, epoch),
    ref,
    handle: `h-${ref}`,
  });
  const finish = (sessionId: string, epoch: number, ref: string) => ({
    ...finishOp(sessionId, epoch, { output: null }),
    ref,
  });
  it('same run, same epoch: the finish carries the handle, the handle op only answers', () => {
    const s = newId('session');
    const p = tickPayload(head([handle(s, 1, 'h1'), finish(s, 1, 'f1')]));
    expect(p.handles).toMatchObject([{ ref: 'h1', folded: true }]);
    expect(p.finishes).toMatchObject([{ ref: 'f1', h_handle: 'h-h1', h_backend: 'simulated' }]);
  });
  it('another epoch, or two handles of one run, stay as they are', () => {
    const s = newId('session');
    const t = newId('session');
    const p = tickPayload(
      head([
        handle(s, 1, 'h1'),
        finish(s, 2, 'f1'),
        handle(t, 1, 'h2'),
        handle(t, 1, 'h3'),
        finish(t, 1, 'f2'),
      ]),
    );
    expect(p.handles.some((h) => h.folded)).toBe(false);
    expect(p.finishes.some((f) => 'h_handle' in f)).toBe(false);
  });
});
