/**
 * The board's watch flag (src/actors/runtimeWatch.ts): up at once for the
 * first watcher, then a catch-up read; down a linger after the last one;
 * one write at a time, the last wish wins, failures tried again. The model
 * test drives watchers, time and the store's answers in any order and checks
 * that, once things settle, the row says exactly whether anyone watches.
 */
import { fc, test } from '@fast-check/vitest';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/actors/runtime.js';
import { WATCH_LINGER_MS } from '../../src/actors/runtimeShell.js';
import type { Runtime } from '../../src/actors/runtimeTypes.js';
import { BoardWatch } from '../../src/actors/runtimeWatch.js';
import { SimulatedBackend } from '../../src/containers/simulated/SimulatedBackend.js';
import { createTestRuntime, type TestRuntime } from '../../src/testing/index.js';
import { TestClock } from '../../src/testing/TestClock.js';
import { describeEachEngine } from '../support/databases.js';
import { advanceAll, killAll, settleAll } from '../support/multiNode.js';

const LINGER = 1_000;

/** A store whose writes wait until the test answers them. */
function harness() {
  const clock = new TestClock(0);
  const writes: Array<{ value: boolean; answer(stored: boolean | Error): void }> = [];
  let row = true;
  let inFlight = 0;
  let maxInFlight = 0;
  let catchUps = 0;
  const errors: unknown[] = [];
  const w = new BoardWatch({
    clock,
    lingerMs: LINGER,
    write: (value) =>
      new Promise<boolean>((resolve, reject) => {
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        writes.push({
          value,
          answer(stored) {
            inFlight -= 1;
            if (stored instanceof Error) reject(stored);
            else {
              if (stored) row = value;
              resolve(stored);
            }
          },
        });
      }),
    catchUp: () => {
      catchUps += 1;
    },
    onError: (e) => errors.push(e),
    track: (p) => p,
  });
  const settle = async () => {
    for (let i = 0; i < 10; i++) await Promise.resolve();
  };
  const advance = async (ms: number) => {
    const at = clock.now() + ms;
    while (clock.fireNext(at)) await settle();
    await settle();
  };
  /** Answers the oldest open write. */
  const answer = async (stored: boolean | Error = true) => {
    const next = writes.shift();
    if (next === undefined) throw new Error('no write open');
    next.answer(stored);
    await settle();
    return next.value;
  };
  return {
    w,
    writes,
    advance,
    answer,
    settle,
    errors,
    row: () => row,
    catchUps: () => catchUps,
    maxInFlight: () => maxInFlight,
  };
}

describe('BoardWatch', () => {
  it('says unwatched a linger after start when nobody watches, and writes nothing before start', async () => {
    const h = harness();
    const release = h.w.watch();
    release();
    await h.advance(5 * LINGER);
    // Before start the boot has no row to write to.
    expect(h.writes).toHaveLength(0);
    h.w.start();
    await h.advance(LINGER - 1);
    expect(h.writes).toHaveLength(0);
    await h.advance(1);
    expect(await h.answer()).toBe(false);
    expect(h.row()).toBe(false);
    await h.advance(10 * LINGER);
    expect(h.writes).toHaveLength(0);
  });

  it('raises the flag at once for the first watcher, then catches up; lowers it a linger after the last', async () => {
    const h = harness();
    h.w.start();
    await h.advance(LINGER);
    await h.answer();
    const a = h.w.watch();
    const b = h.w.watch();
    expect(h.writes.map((x) => x.value)).toEqual([true]);
    expect(h.catchUps()).toBe(0);
    await h.answer();
    // The ticks nobody was told of while the row said unwatched are read now.
    expect(h.catchUps()).toBe(1);
    a();
    a();
    await h.advance(10 * LINGER);
    expect(h.writes).toHaveLength(0);
    b();
    await h.advance(LINGER / 2);
    // Back within the linger (a page reload): nothing written.
    const c = h.w.watch();
    await h.advance(10 * LINGER);
    expect(h.writes).toHaveLength(0);
    c();
    await h.advance(LINGER);
    expect(await h.answer()).toBe(false);
    expect(h.row()).toBe(false);
    expect(h.w.watched()).toBe(false);
  });

  it('writes one at a time, and the last wish wins', async () => {
    const h = harness();
    h.w.start();
    await h.advance(LINGER);
    // The lowering write is open when a watcher comes and goes and comes.
    const a = h.w.watch();
    a();
    const b = h.w.watch();
    expect(h.writes).toHaveLength(1);
    expect(await h.answer()).toBe(false);
    expect(await h.answer()).toBe(true);
    expect(h.row()).toBe(true);
    expect(h.maxInFlight()).toBe(1);
    b();
  });

  it('tries a failed write again after the linger, and a watcher gets its catch-up anyway', async () => {
    const h = harness();
    h.w.start();
    await h.advance(LINGER);
    await h.answer(new Error('store down'));
    expect(h.errors).toHaveLength(1);
    await h.advance(LINGER);
    expect(await h.answer()).toBe(false);
    const release = h.w.watch();
    await h.answer(new Error('store down'));
    expect(h.catchUps()).toBe(1);
    await h.advance(LINGER);
    expect(await h.answer()).toBe(true);
    expect(h.row()).toBe(true);
    release();
  });

  it('tries again while the boot has no row, and stops writing once stopped', async () => {
    const h = harness();
    h.w.start();
    await h.advance(LINGER);
    // No row yet (the first beat failed): nothing stored.
    await h.answer(false);
    expect(h.row()).toBe(true);
    await h.advance(LINGER);
    await h.answer(true);
    expect(h.row()).toBe(false);
    h.w.stop();
    h.w.watch();
    await h.settle();
    await h.advance(10 * LINGER);
    expect(h.writes).toHaveLength(0);
  });
});

type Model = { watchers: number };
type Real = ReturnType<typeof harness> & { releases: Array<() => void> };

const commands = [
  fc.constant({
    check: () => true,
    run: async (m: Model, r: Real) => {
      m.watchers += 1;
      r.releases.push(r.w.watch());
    },
    toString: () => 'watch',
  }),
  fc.nat(5).map((i) => ({
    check: (m: Model) => m.watchers > 0,
    run: async (m: Model, r: Real) => {
      const [release] = r.releases.splice(i % r.releases.length, 1);
      release?.();
      m.watchers -= 1;
    },
    toString: () => `release ${i}`,
  })),
  fc.integer({ min: 1, max: 2 * LINGER }).map((ms) => ({
    check: () => true,
    run: async (_m: Model, r: Real) => r.advance(ms),
    toString: () => `advance ${ms}`,
  })),
  fc.constantFrom<boolean | 'error'>(true, true, false, 'error').map((how) => ({
    check: () => true,
    run: async (_m: Model, r: Real) => {
      if (r.writes.length > 0) await r.answer(how === 'error' ? new Error('lost') : how);
    },
    toString: () => `answer ${how}`,
  })),
];

test.prop([fc.commands(commands, { maxCommands: 60 })], { numRuns: 200 })(
  'once writes are answered and the linger passed, the row says whether anyone watches',
  async (cmds) => {
    const real: Real = { ...harness(), releases: [] };
    real.w.start();
    const model: Model = { watchers: 0 };
    await fc.asyncModelRun(() => ({ model, real }), cmds);
    expect(real.maxInFlight()).toBeLessThanOrEqual(1);
    // Settle: every write answered with success, time past every linger.
    for (let i = 0; i < 10; i++) {
      while (real.writes.length > 0) await real.answer(true);
      await real.advance(2 * LINGER);
    }
    expect(real.writes).toHaveLength(0);
    expect(real.row()).toBe(model.watchers > 0);
    expect(real.w.watched()).toBe(model.watchers > 0);
  },
);

/** Polls `check` every 10 ms of real time (NOTIFY is real), failing after 5 s. */
async function until(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describeEachEngine('a node nobody watches is not told of full ticks', (getDb) => {
  let h: TestRuntime | undefined;
  let b: Runtime | undefined;
  afterEach(async () => {
    if (b) await killAll([b]);
    b = undefined;
    await h?.close();
    h = undefined;
  });

  it('hears them while watched, and catches up when a watcher comes', async () => {
    // The clock stands still but for the linger: no poll fires, so only a
    // NOTIFY or the catch-up read can bring node a's ticks to node b.
    const caps = { maxRunning: 1, defaultUserCap: 1 };
    const still = { dispatchPollMs: 3_600_000 };
    h = await createTestRuntime({ db: getDb().db, caps, nodeId: 'node-a', ...still });
    const harness = h;
    const node = await createRuntime({
      db: getDb().db,
      backend: new SimulatedBackend(harness.cluster),
      clock: harness.clock,
      caps,
      nodeId: 'node-b',
      bootId: 'b',
      ...still,
      notifications: await getDb().connectAnother(),
      onError: (e) => harness.errors.push(e),
    });
    b = node;
    const nodes = [harness.runtime, node];
    const flagOf = async (nodeId: string) =>
      (
        await getDb()
          .db.selectFrom('node_heartbeats')
          .select('watching')
          .where('node_id', '=', nodeId)
          .executeTakeFirstOrThrow()
      ).watching;
    // Nobody watches either board: both rows say so after the linger.
    await advanceAll(harness, nodes, WATCH_LINGER_MS);
    expect([await flagOf('node-a'), await flagOf('node-b')]).toEqual([false, false]);
    const job = { image: 'runner:v1', command: ['sleep', '3600'] };
    const seen = (title: string) => node.cards(null).find((c) => c.title === title);

    // A grant that fills the cap: a full tick, told to nobody.
    await harness.runtime.submit('ann', { title: 'first', ...job });
    await settleAll(nodes);
    await new Promise((r) => setTimeout(r, 300));
    await settleAll(nodes);
    expect(seen('first')).toBeUndefined();

    // A passive subscriber is not a watcher.
    const passive = node.subscribe(() => {}, { passive: true });
    await settleAll(nodes);
    expect(await flagOf('node-b')).toBe(false);
    passive();

    // Someone looks: the flag goes up at once, and the catch-up brings the card.
    const shown: string[] = [];
    const screen = node.subscribe((c) => shown.push(c.title));
    await until('the catch-up', () => seen('first')?.column === 'running');
    expect(await flagOf('node-b')).toBe(true);
    // Queued behind the cap: full again, and now node b is told.
    await harness.runtime.submit('bob', { title: 'second', ...job });
    await until('the NOTIFY of the full tick', () => seen('second')?.queued?.position === 1);
    expect(shown).toContain('second');

    // The last watcher leaves: a linger later the flag is down, and full ticks go untold.
    screen();
    await advanceAll(harness, nodes, WATCH_LINGER_MS);
    expect(await flagOf('node-b')).toBe(false);
    await harness.runtime.submit('cat', { title: 'third', ...job });
    await settleAll(nodes);
    await new Promise((r) => setTimeout(r, 300));
    await settleAll(nodes);
    expect(seen('third')).toBeUndefined();
    // Node a's own board has all three: its ticks' replies.
    expect(
      harness
        .board()
        .map((c) => c.title)
        .sort(),
    ).toEqual(['first', 'second', 'third']);
    expect(harness.errors).toEqual([]);
  }, 60_000);
});

it('tells onWatched at once when the first watcher comes and the last one leaves, not per watcher', () => {
  const told: boolean[] = [];
  const w = new BoardWatch({
    clock: new TestClock(0),
    lingerMs: LINGER,
    write: async () => true,
    catchUp: () => undefined,
    onWatched: (watched) => told.push(watched),
    onError: () => undefined,
    track: (p) => p,
  });
  const first = w.watch();
  const second = w.watch();
  first();
  first();
  expect(told).toEqual([true]);
  second();
  expect(told).toEqual([true, false]);
  w.watch();
  expect(told).toEqual([true, false, true]);
  w.stop();
});
