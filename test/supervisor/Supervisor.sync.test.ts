/**
 * `sync()`: OTP's which_children is a call, answered in mailbox order, so
 * it sees the exits queued before it. `whichChildren()` reads the table now;
 * after `await sync()` it answers as the call would.
 */
import { describe, expect, it } from 'vitest';
import { type AnyActorRef, SimulatedClock } from 'xstate';
import { startSupervisor } from '../../src/supervisor/index.js';
import { graceful, settle, worker } from './workers.js';

describe('Supervisor.sync', () => {
  it('resolves after the exits queued behind a running job are handled', async () => {
    const clock = new SimulatedClock();
    const sup = await startSupervisor(
      {
        children: [
          { id: 'g', start: { logic: graceful } },
          { id: 'w', start: { logic: worker } },
        ],
      },
      { clock },
    );
    // Stopping g takes 100 ms on the clock, and holds the mailbox meanwhile.
    const terminated = sup.terminateChild('g');
    const first = sup.child('w') as AnyActorRef;
    first.send({ type: 'CRASH' });
    await settle();
    // The exit is queued, not handled: the table still shows w running.
    expect(first.getSnapshot().status).toBe('error');
    expect(sup.whichChildren().find((c) => c.id === 'w')).toMatchObject({
      status: 'running',
      restartCount: 0,
      ref: first,
    });
    let synced = false;
    const sync = sup.sync().then(() => {
      synced = true;
    });
    await settle();
    expect(synced).toBe(false);
    clock.increment(100);
    await sync;
    await terminated;
    const w = sup.whichChildren().find((c) => c.id === 'w');
    expect(w).toMatchObject({ status: 'running', restartCount: 1 });
    expect(w?.ref).not.toBe(first);
    expect(sup.whichChildren().map((c) => c.id)).toEqual(['w']);
    await sup.shutdown();
  });

  it('resolves at once when the mailbox is idle, and after the supervisor exited', async () => {
    const sup = await startSupervisor({ children: [{ id: 'w', start: { logic: worker } }] });
    let synced = false;
    void sup.sync().then(() => {
      synced = true;
    });
    await Promise.resolve();
    expect(synced).toBe(true);
    await sup.shutdown();
    await expect(sup.sync()).resolves.toBeUndefined();
  });
});
