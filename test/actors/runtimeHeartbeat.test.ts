/**
 * The heartbeat child on its own: it beats at once and every period on the
 * injected clock, a failing beat is reported and the loop goes on, a hung
 * beat is abandoned after one period, and every tenth beat prunes. The
 * liveness rule runs as doc examples; the two-node behaviour is in
 * runtime.heartbeat.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { createActor, SimulatedClock } from 'xstate';
import * as heartbeat from '../../src/actors/runtimeHeartbeat.js';
import { runDocExamples } from '../support/docExamples.js';
import { fakeDb } from './fakeDb.js';

runDocExamples(new URL('../../src/actors/runtimeHeartbeat.ts', import.meta.url), heartbeat);

const flush = async () => {
  for (let i = 0; i < 20; i += 1) await Promise.resolve();
};

function start(answer: (sql: string) => Promise<{ rows: unknown[] }>) {
  const clock = new SimulatedClock();
  const { db, seen } = fakeDb(answer);
  const errors: unknown[] = [];
  const actor = createActor(
    heartbeat.heartbeatLogic({
      db,
      owner: 'n1@b1',
      nodeId: 'n1',
      heartbeatMs: 1_000,
      staleBeats: 3,
      now: () => clock.now(),
      track: (work) => work,
      onError: (e) => errors.push(e),
    }),
    { clock },
  );
  actor.start();
  const beats = () => seen.filter((q) => q.startsWith('insert into "node_heartbeats"')).length;
  const prunes = () => seen.filter((q) => q.startsWith('delete from "node_heartbeats"')).length;
  return { actor, clock, errors, beats, prunes };
}

describe('heartbeatLogic', () => {
  it('beats at boot and once per period, and prunes on every tenth beat', async () => {
    const h = start(async () => ({ rows: [] }));
    await flush();
    expect(h.beats()).toBe(1);
    expect(h.prunes()).toBe(1);
    for (let i = 0; i < 10; i += 1) {
      h.clock.increment(1_000);
      await flush();
    }
    expect(h.beats()).toBe(11);
    expect(h.prunes()).toBe(2);
    expect(h.errors).toEqual([]);
    h.actor.stop();
  });

  it('a failing beat is reported and the next period beats again', async () => {
    let fail = true;
    const h = start(async () => {
      if (fail) throw new Error('connection refused');
      return { rows: [] };
    });
    await flush();
    expect(h.errors).toHaveLength(1);
    expect(h.actor.getSnapshot().status).toBe('active');
    fail = false;
    h.clock.increment(1_000);
    await flush();
    expect(h.beats()).toBe(2);
    expect(h.errors).toHaveLength(1);
    h.actor.stop();
  });

  it('a beat that never answers is abandoned after one period; beats never pile up', async () => {
    const h = start(() => new Promise<never>(() => {}));
    await flush();
    expect(h.beats()).toBe(1);
    h.clock.increment(999);
    await flush();
    expect(h.beats()).toBe(1);
    h.clock.increment(1);
    await flush();
    expect(h.beats()).toBe(2);
    h.clock.increment(1_000);
    await flush();
    expect(h.beats()).toBe(3);
    h.actor.stop();
  });
});
