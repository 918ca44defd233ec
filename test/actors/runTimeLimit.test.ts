import { expect, it } from 'vitest';
import * as mod from '../../src/actors/runTimeLimit.js';
import { newId, type Session } from '../../src/db/index.js';
import { validateTickOp } from '../../src/db/validateTickOp.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/actors/runTimeLimit.ts', import.meta.url), mod);

it('a timed-out finish is an op the tick takes: failed, not re-queued, in the failed column', () => {
  const op = mod.timedOutFinish({ id: newId('session'), epoch: 2 } as Session, null);
  expect(validateTickOp({ ...op, ref: 'f1' })).toMatchObject({
    op: 'finish',
    status: 'failed',
    reason: 'timed_out',
    requeue: null,
    column: 'failed',
  });
});
