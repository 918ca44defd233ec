import { describe, expect, it } from 'vitest';
import { type AnyActorRef, SimulatedClock } from 'xstate';
import { type ExitReason, fromSafeCallback, startSupervisor } from '../../src/supervisor/index.js';
import { expectNoUncaught } from './noUncaught.js';
import { settle } from './workers.js';

// Every test here also proves the Node process saw no uncaught error.
expectNoUncaught();

const makeFailures = (clock: SimulatedClock) => ({
  sync: fromSafeCallback(() => {
    throw new Error('sync');
  }),
  async: fromSafeCallback<{ type: 'GO' }>(async ({ receive }) => {
    await new Promise<void>((resolve) => receive(() => resolve()));
    throw new Error('async');
  }),
  guarded: fromSafeCallback<{ type: 'GO' }>(({ receive, guard }) => {
    receive(() =>
      queueMicrotask(
        guard(() => {
          throw new Error('guarded');
        }),
      ),
    );
    return undefined;
  }),
  onClock: fromSafeCallback(({ fail }) => {
    clock.setTimeout(() => fail(new Error('onClock')), 10);
    return undefined;
  }),
});
const failureKinds = ['sync', 'async', 'guarded', 'onClock'] as const;

describe('fromSafeCallback', () => {
  it.each(failureKinds)('a %s failure is the actor exit, never an uncaught error', async (kind) => {
    const clock = new SimulatedClock();
    const failures = makeFailures(clock);
    const reasons: ExitReason[] = [];
    const sup = await startSupervisor(
      {
        children: [
          {
            id: 'cb',
            restart: 'temporary',
            start: { logic: failures[kind] },
          },
        ],
      },
      { clock },
    ).catch((e: { reason: ExitReason }) => {
      reasons.push(e.reason);
      return undefined;
    });
    sup?.subscribe((e) => e.type === 'roundtable.child.exited' && reasons.push(e.reason));
    if (kind === 'async' || kind === 'guarded')
      (sup?.child('cb') as AnyActorRef | undefined)?.send({ type: 'GO' } as never);
    await settle(20);
    clock.increment(10);
    await settle(20);
    expect(reasons).toHaveLength(1);
    expect(((reasons[0] as { error: Error }).error as Error).message).toBe(kind);
    await sup?.shutdown();
  });

  it('runs the cleanup of an async callback on stop', async () => {
    let cleaned = false;
    const logic = fromSafeCallback(async () => () => {
      cleaned = true;
    });
    const sup = await startSupervisor({ children: [{ id: 'cb', start: { logic } }] });
    await settle();
    await sup.shutdown();
    expect(cleaned).toBe(true);
  });
});
