/**
 * The runtime's reads over fakes of its parts: `health()` says what each
 * part says (and `none` for what this node does not have), the pool and
 * the metrics come from the same line book; a read of the rows the store did
 * not answer is `unavailable`, any other failure goes on as it is. The rows
 * read are the db's (test/db) and the whole runtime's
 * (test/actors/runtime.*.test.ts).
 */
import { expect, test } from 'vitest';
import { RuntimeMetrics } from '../../src/actors/runtimeMetrics.js';
import * as queriesModule from '../../src/actors/runtimeQueries.js';
import { type RuntimeQueryOptions, runtimeQueries } from '../../src/actors/runtimeQueries.js';
import { RuntimeCommandError } from '../../src/actors/runtimeTypes.js';
import { type Db, newId } from '../../src/db/index.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/actors/runtimeQueries.ts', import.meta.url), queriesModule);

/** These tests read no rows. */
const noStore = new Proxy({} as Db, {
  get(_, key) {
    throw new Error(`read the store (${String(key)})`);
  },
});

const pool = {
  maxRunning: 4,
  running: 1,
  queued: 2,
  users: [{ userId: 'ann', running: 1, queued: 2, maxRunning: null }],
};

function parts(over: Partial<RuntimeQueryOptions> = {}): RuntimeQueryOptions {
  return {
    db: noStore,
    board: { cards: () => [], subscribe: () => () => {}, line: { keys: () => [] } as never },
    watch: { watch: () => () => {} },
    pool: () => pool,
    metrics: new RuntimeMetrics(),
    engine: { available: () => true },
    feed: { listening: true, seenTick: () => 42 },
    dispatcher: { holding: () => 3, backlog: () => 5 },
    cluster: () => undefined,
    leader: undefined,
    now: () => 0,
    ...over,
  };
}

test('health: each part as it says; no boot lock and no leader read as none', () => {
  expect(runtimeQueries(parts()).health()).toEqual({
    engine: 'available',
    notifications: 'listening',
    tick: 42,
    holding: 3,
    backlog: 5,
    lock: 'none',
    reconciler: 'none',
  });
});

test('health: a closed engine gate, a polling feed, a lost boot lock, a follower', () => {
  const health = runtimeQueries(
    parts({
      engine: { available: () => false },
      feed: { listening: false, seenTick: () => 7 },
      cluster: () => ({ self: () => 'lost', nodes: async () => [] }),
      leader: { state: () => 'follower' },
    }),
  ).health();
  expect(health).toMatchObject({
    engine: 'unavailable',
    notifications: 'polling',
    tick: 7,
    lock: 'lost',
    reconciler: 'follower',
  });
});

test('the pool snapshot and the metrics are the same line book', () => {
  const q = runtimeQueries(parts());
  expect(q.poolSnapshot()).toBe(pool);
  expect(q.metrics()).toMatchObject({
    queueDepth: [{ userId: 'ann', queued: 2 }],
    running: [{ userId: 'ann', running: 1 }],
  });
});

test('a subscriber watches the board until it leaves, unless it says passive', () => {
  let watchers = 0;
  let listeners = 0;
  const q = runtimeQueries(
    parts({
      board: {
        cards: () => [],
        subscribe: () => {
          listeners += 1;
          return () => {
            listeners -= 1;
          };
        },
        line: { keys: () => [] } as never,
      },
      watch: {
        watch: () => {
          watchers += 1;
          return () => {
            watchers -= 1;
          };
        },
      },
    }),
  );
  const screen = q.subscribe(() => {});
  const stats = q.subscribe(() => {}, { passive: true });
  expect([listeners, watchers]).toEqual([2, 1]);
  const held = q.watch?.();
  expect(watchers).toBe(2);
  screen();
  stats();
  held?.();
  expect([listeners, watchers]).toEqual([0, 0]);
});

/** A store whose every query fails with `error`, as a Kysely over a dead pool would. */
const failingStore = (error: Error) =>
  new Proxy({} as Db, {
    get() {
      throw error;
    },
  });

/** Every read of the rows, of ids that are well formed. */
function rowReads(q: ReturnType<typeof runtimeQueries>): Array<[string, () => Promise<unknown>]> {
  const [task, session] = [newId('task'), newId('session')];
  return [
    ['taskDetail', () => q.taskDetail('ann', task)],
    ['taskOutput', () => q.taskOutput('ann', task, session)],
    ['sessionOutput', () => q.sessionOutput('ann', session)],
    ['lineStatus', () => q.lineStatus(5)],
    ['activity', () => q.activity({ minutes: 60 })],
    ['clusterNodes', () => q.clusterNodes()],
  ];
}

test('a read the store did not answer is unavailable, with the store error as cause', async () => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
    code: 'ECONNREFUSED',
  });
  for (const [name, read] of rowReads(runtimeQueries(parts({ db: failingStore(refused) })))) {
    const error = await read().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error, name).toBeInstanceOf(RuntimeCommandError);
    expect(error, name).toMatchObject({ code: 'unavailable', message: 'the store did not answer' });
    expect((error as Error).cause, name).toBe(refused);
  }
});

test('a read that failed for another reason (a bug) goes on as it is', async () => {
  const bug = Object.assign(new Error('column "x" does not exist'), { code: '42703' });
  for (const [name, read] of rowReads(runtimeQueries(parts({ db: failingStore(bug) })))) {
    await expect(read(), name).rejects.toBe(bug);
  }
});

test('an outage is what the runtime’s isTransient says it is', async () => {
  const odd = Object.assign(new Error('the proxy said no'), { code: 'X0001' });
  const queries = runtimeQueries(
    parts({ db: failingStore(odd), isTransient: (e) => (e as { code?: string }).code === 'X0001' }),
  );
  for (const [name, read] of rowReads(queries)) {
    await expect(read(), name).rejects.toMatchObject({ code: 'unavailable' });
  }
});
