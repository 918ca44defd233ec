/**
 * The inspector tests' workload: a small supervised tree whose worker has a
 * statechart worth drawing, crashes on command, and invokes a child.
 */
import { assign, fromCallback, SimulatedClock, setup } from 'xstate';
import type { Supervisor } from '../../../src/supervisor/Supervisor.js';
import { startSupervisor } from '../../../src/supervisor/startSupervisor.js';
import {
  createInspector,
  type Inspector,
} from '../../../src/ui-server/inspector/createInspector.js';
import type { InspectorOptions } from '../../../src/ui-server/inspector/inspectorOptions.js';

export type JobEvent = { type: 'START' } | { type: 'FINISH' } | { type: 'CRASH' };

/** idle -> working (invokes a ticker) -> idle; CRASH throws in an action. */
export const job = setup({
  types: {} as { events: JobEvent; context: { runs: number; note: Error | null } },
  actions: {
    boom: () => {
      throw new Error('boom');
    },
  },
  actors: { ticker: fromCallback(() => () => {}) },
}).createMachine({
  id: 'job',
  context: { runs: 0, note: null },
  initial: 'idle',
  states: {
    idle: {
      on: {
        START: { target: 'working', actions: assign({ runs: ({ context }) => context.runs + 1 }) },
      },
    },
    working: {
      invoke: { id: 'ticker', src: 'ticker' },
      on: { FINISH: 'idle' },
    },
  },
  on: { CRASH: { actions: 'boom' } },
});

/** A clock for the supervisor and the hub: simulated time plus `now()`. */
export function testClock(): SimulatedClock {
  const clock = new SimulatedClock();
  clock.set(Date.parse('2026-11-01T10:00:00Z'));
  return clock;
}

export interface Workload {
  inspector: Inspector;
  root: Supervisor;
  clock: SimulatedClock;
}

/** root (one_for_one) with `jobs` workers and a nested supervisor holding one more. */
export async function startWorkload(options: InspectorOptions = {}, jobs = 2): Promise<Workload> {
  const clock = testClock();
  const inspector = createInspector({ clock, ...options });
  const children = Array.from({ length: jobs }, (_, i) => ({
    id: `job-${i + 1}`,
    start: { logic: job },
    restart: 'permanent' as const,
  }));
  const root = await startSupervisor(
    {
      id: 'root',
      intensity: 10,
      children: [
        ...children,
        {
          id: 'nested',
          start: { supervisor: { children: [{ id: 'deep', start: { logic: job } }] } },
          type: 'supervisor',
        },
      ],
    },
    { clock, inspect: inspector.observer },
  );
  return { inspector, root, clock };
}
