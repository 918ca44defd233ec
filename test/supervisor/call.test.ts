import { describe, expect, it } from 'vitest';
import { createActor, SimulatedClock, setup } from 'xstate';
import {
  CallExitError,
  type CallRequest,
  CallTimeoutError,
  call,
} from '../../src/supervisor/index.js';
import { settle, worker } from './workers.js';

type Ask = CallRequest<{ type: 'ASK' }, number>;
/** Holds the request; answers on ANSWER, crashes on CRASH. */
const slow = setup({
  types: {} as {
    context: { pending: Ask[] };
    events: Ask | { type: 'ANSWER' } | { type: 'CRASH' };
  },
  actions: {
    boom: () => {
      throw new Error('died mid-call');
    },
  },
}).createMachine({
  context: { pending: [] },
  on: {
    ASK: { actions: ({ context, event }) => context.pending.push(event) },
    ANSWER: {
      actions: ({ context }) => {
        for (const [i, p] of context.pending.entries()) p.reply(i + 1);
      },
    },
    CRASH: { actions: 'boom' },
  },
});

describe('call', () => {
  it('correlates the reply', async () => {
    const clock = new SimulatedClock();
    const target = createActor(worker, { input: { tag: '1' } }).start();
    await expect(call(target, { type: 'PING' }, { clock })).resolves.toBe('pong1');
  });

  it('times out on the clock with a typed error, and drops the late reply', async () => {
    const clock = new SimulatedClock();
    const target = createActor(slow).start();
    const p = call<number>(target, { type: 'ASK' }, { timeoutMs: 1000, clock });
    clock.increment(999);
    await settle();
    clock.increment(1);
    const err = await p.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CallTimeoutError);
    expect(err).toMatchObject({ code: 'CALL_TIMEOUT', timeoutMs: 1000 });
    target.send({ type: 'ANSWER' }); // late: dropped, no throw
  });

  it('rejects with the exit reason when the target dies mid-call', async () => {
    const clock = new SimulatedClock();
    const target = createActor(slow);
    target.subscribe({ error: () => {} });
    target.start();
    const p = call<number>(target, { type: 'ASK' }, { clock });
    target.send({ type: 'CRASH' });
    const err = (await p.catch((e: unknown) => e)) as CallExitError;
    expect(err).toBeInstanceOf(CallExitError);
    expect((err.reason as { error: Error }).error.message).toBe('died mid-call');
    expect((err.cause as Error).message).toBe('died mid-call');
  });

  it('rejects with noproc when the target is already gone', async () => {
    const target = createActor(worker).start();
    target.stop();
    await expect(call(target, { type: 'PING' })).rejects.toMatchObject({ reason: 'noproc' });
  });
});
