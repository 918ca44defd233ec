/**
 * An inspection observer that throws cannot break the tree it watches: a
 * plain `inspect` and an inspector's gate both report the throw to the
 * tree's `onError` and the actors go on (src/supervisor/guardedObserver.ts).
 */
import { describe, expect, it } from 'vitest';
import type { AnyActorRef } from 'xstate';
import * as mod from '../../src/supervisor/guardedObserver.js';
import {
  InspectionGate,
  InspectObserverError,
  type SupervisorError,
  startSupervisor,
} from '../../src/supervisor/index.js';
import { runDocExamples } from '../support/docExamples.js';
import { expectNoUncaught } from './noUncaught.js';
import { settle, worker } from './workers.js';

runDocExamples(new URL('../../src/supervisor/guardedObserver.ts', import.meta.url), mod);
expectNoUncaught();

const bug = new Error('observer bug');
const throwing = () => {
  throw bug;
};

/** A PING answered by child `id` of `sup`: the child is alive and stepping. */
async function ping(sup: { child(id: string): unknown }, id: string): Promise<string> {
  const ref = sup.child(id) as AnyActorRef;
  let reply = '';
  ref.send({ type: 'PING', callRef: 'r', reply: (v: string) => (reply = v) });
  await settle();
  return reply;
}

describe('guardObserver', () => {
  it('an observer object whose next throws: reported with the frame it threw on', () => {
    const errors: InspectObserverError[] = [];
    const guarded = mod.guardObserver({ next: throwing }, (e) => errors.push(e));
    guarded({ type: '@xstate.snapshot' } as Parameters<typeof guarded>[0]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      code: 'INSPECT_OBSERVER_FAILED',
      eventType: '@xstate.snapshot',
    });
    expect(errors[0]?.cause).toBe(bug);
  });

  it('a plain inspect that throws on every frame: the tree starts, its children step, onError hears', async () => {
    const errors: SupervisorError[] = [];
    const sup = await startSupervisor(
      { id: 'root', children: [{ id: 'a', start: { logic: worker } }] },
      { inspect: throwing, onError: (e) => errors.push(e) },
    );
    expect(await ping(sup, 'a')).toBe('pong');
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.every((e) => e instanceof InspectObserverError && e.cause === bug)).toBe(true);
    await sup.shutdown();
  });

  it("an inspector's gate whose observer throws: reported to the tree's onError, open or closed", async () => {
    const errors: SupervisorError[] = [];
    const gate = new InspectionGate(throwing);
    const sup = await startSupervisor(
      { id: 'root', children: [{ id: 'a', start: { logic: worker } }] },
      { inspect: gate, onError: (e) => errors.push(e) },
    );
    const closed = errors.length;
    // Closed, the gate still feeds the supervisor's shell frames.
    expect(closed).toBeGreaterThan(0);
    const close = gate.open();
    expect(await ping(sup, 'a')).toBe('pong');
    expect(errors.length).toBeGreaterThan(closed);
    expect(errors.every((e) => e instanceof InspectObserverError)).toBe(true);
    close();
    await sup.shutdown();
  });
});
