/** Test actors: a worker that crashes, exits or ignores its stop on command. */
import { assign, fromPromise, setup } from 'xstate';
import type { ExitReason } from '../../src/supervisor/exitReason.js';

export type WorkerEvent =
  | { type: 'CRASH' }
  | { type: 'EXIT'; exit?: ExitReason }
  | { type: 'PING'; callRef: string; reply: (v: string) => void }
  | { type: 'roundtable.shutdown' };

/** Crashes on CRASH (a throw in an action), exits on EXIT, replies to PING. */
export const worker = setup({
  types: {} as { events: WorkerEvent; context: { exit: ExitReason | undefined; tag: string } },
  actions: {
    boom: () => {
      throw new Error('boom');
    },
  },
}).createMachine({
  context: ({ input }) => ({
    exit: undefined,
    tag: (input as { tag?: string } | undefined)?.tag ?? '',
  }),
  initial: 'idle',
  states: {
    idle: {
      on: {
        CRASH: { actions: 'boom' },
        EXIT: { target: 'done', actions: assign({ exit: ({ event }) => event.exit }) },
        PING: { actions: ({ event, context }) => event.reply(`pong${context.tag}`) },
      },
    },
    done: { type: 'final' },
  },
  output: ({ context }) => (context.exit === undefined ? {} : { exit: context.exit }),
});

/** Handles roundtable.shutdown by draining forever: it must be killed. */
export const stubborn = setup({}).createMachine({
  initial: 'busy',
  states: {
    busy: { on: { 'roundtable.shutdown': 'draining' } },
    draining: {},
  },
});

/** Handles roundtable.shutdown by finishing after 100 ms (on the clock). */
export const graceful = setup({}).createMachine({
  initial: 'busy',
  states: {
    busy: { on: { 'roundtable.shutdown': 'draining' } },
    draining: { after: { 100: 'done' } },
    done: { type: 'final' },
  },
});

/** Fails at start: its initial entry action throws. */
export const failsAtStart = setup({
  actions: {
    boom: () => {
      throw new Error('cannot start');
    },
  },
}).createMachine({ entry: 'boom' });

/** A promise actor that rejects. */
export const rejects = fromPromise(async () => {
  throw new Error('rejected');
});

/** Lets queued microtasks and promise callbacks run (no real time passes). */
export async function settle(rounds = 10): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve();
}
