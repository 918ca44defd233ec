import { describe, expect, it } from 'vitest';
import { type AnyActorLogic, type AnyActorRef, setup } from 'xstate';
import { validateChildSpec } from '../../src/supervisor/childSpec.js';
import type { ExitReason } from '../../src/supervisor/exitReason.js';
import { type Spawned, spawnChild } from '../../src/supervisor/spawnChild.js';
import { resolveRuntime } from '../../src/supervisor/supervisorSpec.js';
import { exitReasonOf } from '../../src/supervisor/watchExit.js';
import { settle, worker } from './workers.js';

const doneAtStart = setup({}).createMachine({ type: 'final' });
const runtime = resolveRuntime();
const noNested = () => {
  throw new Error('no nested supervisors here');
};

function start(logic: AnyActorLogic, input?: unknown) {
  const told: [string, ExitReason][] = [];
  const sink = {
    childExited: (token: string, _s: Spawned, r: ExitReason) => told.push([token, r]),
  };
  const result = spawnChild(
    validateChildSpec({ id: 'c', start: { logic } }),
    input,
    runtime,
    noNested,
    sink,
    'tok',
  );
  if (!result.ok) throw new Error('start failed');
  return { spawned: result.spawned, told };
}

describe('spawnChild', () => {
  it('tells the sink once, with the token, when the child exits by itself', async () => {
    const { spawned, told } = start(worker);
    (spawned.ref as AnyActorRef).send({ type: 'CRASH' });
    (spawned.ref as AnyActorRef).send({ type: 'EXIT' });
    await settle();
    expect(told.map(([t, r]) => [t, (r as { error: Error }).error.message])).toEqual([
      ['tok', 'boom'],
    ]);
  });

  it('a child done at start is told on a microtask, unless stopped before it', async () => {
    const a = start(doneAtStart);
    expect(a.told).toEqual([]);
    await settle();
    expect(a.told).toEqual([['tok', 'normal']]);
    const b = start(doneAtStart);
    b.spawned.kill();
    await settle();
    expect(b.told).toEqual([]);
    expect(await b.spawned.whenExited()).toBe('normal');
  });

  it('once stopped by the supervisor, the exit goes to whenExited, not the sink', async () => {
    const { spawned, told } = start(worker);
    expect(spawned.requestStop()).toBe(false);
    expect(await spawned.whenExited()).toBe('shutdown');
    await settle();
    expect(told).toEqual([]);
  });

  it('a kill reads as killed to every watcher, recorded or not', async () => {
    const { spawned } = start(worker);
    const ref = spawned.ref as AnyActorRef;
    spawned.kill();
    expect(spawned.reason).toBe('killed');
    expect(exitReasonOf(ref)).toBe('killed');
    expect(ref.getSnapshot().status).toBe('stopped');
  });

  it('passes the input to the actor, and no input as undefined', () => {
    const echo = setup({}).createMachine({ context: ({ input }) => ({ input }) });
    const context = (s: Spawned) => (s.ref as AnyActorRef).getSnapshot().context as unknown;
    expect(context(start(echo, { tag: 'x' }).spawned)).toEqual({ input: { tag: 'x' } });
    expect(context(start(echo).spawned)).toEqual({ input: undefined });
  });
});
