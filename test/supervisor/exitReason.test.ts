import { describe, expect, it } from 'vitest';
import type { AnyActorRef } from 'xstate';
import * as mod from '../../src/supervisor/exitReason.js';
import { startSupervisor } from '../../src/supervisor/index.js';
import { runDocExamples } from '../support/docExamples.js';
import { settle, worker } from './workers.js';

runDocExamples(new URL('../../src/supervisor/exitReason.ts', import.meta.url), mod);

describe('a transient child finishing with an exit reason', () => {
  const finish = async (exit: unknown) => {
    const sup = await startSupervisor({
      children: [{ id: 't', restart: 'transient', start: { logic: worker } }],
    });
    (sup.child('t') as AnyActorRef).send({ type: 'EXIT', exit });
    await settle();
    const row = sup.whichChildren()[0];
    await sup.shutdown();
    return [row?.status, row?.restartCount];
  };

  it('an unknown term (`{ exit: "crash" }`) is abnormal: restarted, as OTP does', async () => {
    expect(await finish('crash')).toEqual(['running', 1]);
    expect(await finish({ code: 3 })).toEqual(['running', 1]);
  });

  it('normal, shutdown and `{ shutdown }` are clean: it stays stopped', async () => {
    for (const exit of ['normal', 'shutdown', { shutdown: 'drained' }, undefined])
      expect(await finish(exit)).toEqual(['stopped', 0]);
  });
});
