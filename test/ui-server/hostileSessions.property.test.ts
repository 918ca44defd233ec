/**
 * Random hostile sessions against a control client (issue 14): garbage,
 * binary, oversized and bad-JSON frames, unknown types, subscribe floods
 * over many sockets, reconnect storms, readers that never read, and a board
 * churning large cards, in any order. After every move the control client
 * (another user) must get its next update within the harness deadline, no
 * socket may ever hold a card of another user, and at the end the control's
 * read model equals the board. Bounded: 20 runs, each within RUN_MS.
 */
import { fc, test } from '@fast-check/vitest';
import { afterEach, expect } from 'vitest';
import { Arena, type Attack } from './hostileSession.js';

const RUN_MS = 6_000;
const RUNS = 20;

const LIMITS = {
  maxPayload: 8 * 1024,
  floodBurst: 20,
  floodPerSecond: 10,
  floodStrikes: 5,
  maxConnectionsPerUser: 6,
  maxUserBufferedBytes: 512 * 1024,
  subscribeBurst: 4,
  subscribePerSecond: 2,
  slowCloseGraceMs: 200,
  // Manual time jumps without real time for pongs to arrive: no heartbeat here.
  heartbeatMs: 3_600_000,
};

const attack: fc.Arbitrary<Attack> = fc.oneof(
  fc.record({ kind: fc.constant('garbage'), text: fc.string({ maxLength: 200 }) }),
  fc.record({ kind: fc.constant('binary'), bytes: fc.uint8Array({ maxLength: 64 }) }),
  fc.record({ kind: fc.constant('oversize') }),
  fc.record({ kind: fc.constant('badJson') }),
  fc.record({ kind: fc.constant('unknownType'), type: fc.string({ maxLength: 20 }) }),
  fc.record({
    kind: fc.constant('subscribeFlood'),
    sockets: fc.integer({ min: 1, max: 6 }),
    count: fc.integer({ min: 1, max: 40 }),
    filtered: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('reconnect'), count: fc.integer({ min: 1, max: 8 }) }),
  fc.record({ kind: fc.constant('slowReaders'), count: fc.integer({ min: 1, max: 4 }) }),
  fc.record({ kind: fc.constant('churn'), changes: fc.integer({ min: 1, max: 200 }) }),
  fc.record({ kind: fc.constant('tick'), ms: fc.integer({ min: 1, max: 2_000 }) }),
);

let arena: Arena | undefined;
afterEach(async () => {
  await arena?.close();
  arena = undefined;
});

test.prop([fc.array(attack, { minLength: 1, maxLength: 16 })], {
  numRuns: RUNS,
  timeout: RUN_MS,
  interruptAfterTimeLimit: RUNS * RUN_MS,
  markInterruptAsFailure: true,
})(
  'the control client keeps its updates and no socket sees a foreign card',
  async (attacks) => {
    await arena?.close();
    arena = await Arena.start({ limits: LIMITS, cards: 60, realClock: false });
    for (const a of attacks) {
      await arena.attack(a);
      await arena.probe();
      arena.audit();
    }
    expect(arena.foreign).toEqual([]);
    expect(arena.controlInStep()).toBe(true);
    expect(arena.control.ws.readyState).toBe(arena.control.ws.OPEN);
    expect((await fetch(`${arena.h.server.url}/healthz`)).status).toBe(200);
    await arena.close();
    arena = undefined;
  },
  RUNS * RUN_MS + 30_000,
);
