/**
 * An InspectionGate as a supervisor's `inspect`: supervision events always,
 * the children's own frames only while open, and on open every live actor
 * (with what it invoked) told as it is now.
 */
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { type AnyActorRef, assign, fromPromise, type InspectionEvent, setup } from 'xstate';
import { InspectionGate, startSupervisor } from '../../src/supervisor/index.js';
import { settle, worker } from './workers.js';

/** Waits in `busy` on a promise that never settles (an invoked child), counts PINGs. */
const holder = setup({
  types: {} as { context: { pings: number }; events: { type: 'PING' } },
  actors: { wait: fromPromise(() => new Promise<never>(() => {})) },
}).createMachine({
  id: 'holder',
  context: { pings: 0 },
  initial: 'busy',
  states: {
    busy: {
      invoke: { id: 'waiting', src: 'wait' },
      on: { PING: { actions: assign({ pings: ({ context }) => context.pings + 1 }) } },
    },
  },
});

function recorder() {
  const frames: InspectionEvent[] = [];
  const of = (type: InspectionEvent['type'], id?: string) =>
    frames.filter(
      (f) => f.type === type && (id === undefined || (f.actorRef as AnyActorRef).id === id),
    );
  return { frames, of, observer: (e: InspectionEvent) => frames.push(e) };
}

describe('InspectionGate', () => {
  it('closed: the supervisor shell is seen, the children’s events are not', async () => {
    const r = recorder();
    const gate = new InspectionGate(r.observer);
    const sup = await startSupervisor(
      { id: 'root', children: [{ id: 'a', start: { logic: holder } }] },
      { inspect: gate },
    );
    const a = sup.child('a') as AnyActorRef;
    a.send({ type: 'PING' });
    await settle();
    expect(r.of('@xstate.event', 'a')).toEqual([]);
    expect(r.of('@xstate.actor', 'a')).toEqual([]);
    // The shell got child.started: the tree is known with nobody watching.
    const shellEvents = r
      .of('@xstate.event', 'root')
      .map((f) => (f as { event: { type: string } }).event.type);
    expect(shellEvents).toContain('roundtable.child.started');
    expect(gate.size).toBe(1);
    await sup.shutdown();
    expect(gate.size).toBe(0);
  });

  it('open mid-run: every live actor and its invoked child, with current snapshots, then their events', async () => {
    const r = recorder();
    const gate = new InspectionGate(r.observer);
    const sup = await startSupervisor(
      {
        id: 'root',
        children: [
          { id: 'a', start: { logic: holder } },
          { id: 'b', start: { logic: worker } },
        ],
      },
      { inspect: gate },
    );
    const a = sup.child('a') as AnyActorRef;
    a.send({ type: 'PING' });
    a.send({ type: 'PING' });
    await settle();
    r.frames.length = 0;

    const close = gate.open();
    expect(gate.isOpen).toBe(true);
    expect(
      r
        .of('@xstate.actor')
        .map((f) => (f.actorRef as AnyActorRef).id)
        .sort(),
    ).toEqual(['a', 'b', 'waiting']);
    const snapA = r.of('@xstate.snapshot', 'a')[0] as unknown as {
      snapshot: { value: string; context: { pings: number } };
    };
    expect(snapA.snapshot.value).toBe('busy');
    expect(snapA.snapshot.context.pings).toBe(2);
    const waiting = r.of('@xstate.actor', 'waiting')[0]!.actorRef as AnyActorRef;
    expect(waiting._parent?.sessionId).toBe(a.sessionId);

    a.send({ type: 'PING' });
    await settle();
    expect(
      r.of('@xstate.event', 'a').map((f) => (f as { event: { type: string } }).event.type),
    ).toContain('PING');

    // A child started while open is followed from its start, its invoked child included.
    await sup.startChild({ id: 'c', start: { logic: holder } });
    expect(r.of('@xstate.actor', 'c')).toHaveLength(1);
    expect(
      r.of('@xstate.actor', 'waiting').some((f) => (f.actorRef as AnyActorRef)._parent?.id === 'c'),
    ).toBe(true);

    close();
    expect(gate.isOpen).toBe(false);
    r.frames.length = 0;
    a.send({ type: 'PING' });
    (sup.child('c') as AnyActorRef).send({ type: 'PING' });
    await settle();
    expect(r.of('@xstate.event', 'a')).toEqual([]);
    expect(r.of('@xstate.event', 'c')).toEqual([]);
    await sup.shutdown();
  });

  it('stays open until every open is closed; a close is idempotent', async () => {
    const r = recorder();
    const gate = new InspectionGate(r.observer);
    const sup = await startSupervisor(
      { id: 'root', children: [{ id: 'a', start: { logic: holder } }] },
      { inspect: gate },
    );
    const first = gate.open();
    const second = gate.open();
    first();
    first();
    expect(gate.isOpen).toBe(true);
    second();
    expect(gate.isOpen).toBe(false);
    await sup.shutdown();
  });

  it('an actor that ended while closed is not told on the next open', async () => {
    const r = recorder();
    const gate = new InspectionGate(r.observer);
    const sup = await startSupervisor(
      { id: 'root', children: [{ id: 'b', start: { logic: worker }, restart: 'temporary' }] },
      { inspect: gate },
    );
    (sup.child('b') as AnyActorRef).send({ type: 'EXIT' });
    await settle();
    expect(gate.size).toBe(0);
    gate.open();
    expect(r.of('@xstate.actor', 'b')).toEqual([]);
    await sup.shutdown();
  });
});

describe('InspectionGate: an actor that ends while open', () => {
  test.prop([fc.constantFrom<'EXIT' | 'CRASH'>('EXIT', 'CRASH'), fc.string({ maxLength: 8 })], {
    numRuns: 10,
  })('its last snapshot is told (final state and output, or the error)', async (how, tag) => {
    const r = recorder();
    const gate = new InspectionGate(r.observer);
    const sup = await startSupervisor(
      { children: [{ id: 'w', start: { logic: worker, input: { tag } }, restart: 'temporary' }] },
      { inspect: gate },
    );
    const close = gate.open();
    try {
      const w = sup.child('w') as AnyActorRef;
      const exit = { shutdown: tag };
      w.send(how === 'EXIT' ? { type: 'EXIT', exit } : { type: 'CRASH' });
      await settle();
      const frame = r.of('@xstate.snapshot', 'w').at(-1) as
        | Extract<InspectionEvent, { type: '@xstate.snapshot' }>
        | undefined;
      const last = frame?.snapshot as
        | { status: string; value: unknown; output?: unknown; error?: unknown }
        | undefined;
      if (how === 'EXIT') {
        expect(last).toMatchObject({ status: 'done', value: 'done', output: { exit } });
      } else {
        expect(last?.status).toBe('error');
        expect((last?.error as Error | undefined)?.message).toBe('boom');
      }
      expect(gate.size).toBe(0);
    } finally {
      close();
      await sup.shutdown();
    }
  });
});
