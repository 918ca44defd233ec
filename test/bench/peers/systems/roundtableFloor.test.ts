/**
 * The peers bench's floor row (bench/peers/systems/roundtableFloor.ts) is a
 * lower bound of the tick only if it does the tick's scheduling work: the
 * same grants, in the same order, under the same caps. Both rows run the
 * same jobs through their loops on databases of their own; their start
 * orders must be the same, job for job.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { roundtableFloor } from '../../../../bench/peers/systems/roundtableFloor.js';
import { roundtableTick } from '../../../../bench/peers/systems/roundtableTick.js';
import type { BenchSystem } from '../../../../bench/peers/types.js';
import { createServerDatabase } from '../../../support/databases.js';
import { describeServer, until } from '../../../support/serverSuite.js';

/** 3 jobs for each of 100 users, then 50 more for the first users: lines of 3 and 4. */
const KEYS = Array.from({ length: 350 }, (_, i) => `k${i}`);
const GLOBAL = 20;

/** Runs KEYS through `system` on a fresh database: the order their jobs started in. */
async function startOrder(system: BenchSystem, url: string): Promise<string[]> {
  await system.setup(url, { recovery: false });
  const client = await system.client(url);
  const started: string[] = [];
  try {
    await client.enqueueMany(KEYS);
    const worker = await system.startWorker(
      url,
      { concurrency: GLOBAL, job: 'noop', recovery: false },
      (key) => started.push(key),
    );
    try {
      await until(async () => started.length === KEYS.length, 'every job to start');
    } finally {
      await worker.stop();
    }
    expect(await client.pending()).toBe(0);
  } finally {
    await client.close();
  }
  return started;
}

describeServer('the floor row of the peers bench', () => {
  const dbs: { url: string; drop(): Promise<void> }[] = [];
  beforeAll(async () => {
    for (let i = 0; i < 2; i++) {
      const db = await createServerDatabase();
      if (db === null) throw new Error('no Postgres server');
      dbs.push(db);
    }
  }, 60_000);
  afterAll(async () => {
    for (const db of dbs) await db.drop();
  });

  it('grants what the tick grants, in the same order', async () => {
    const [tickDb, floorDb] = dbs;
    const byTick = await startOrder(roundtableTick, tickDb?.url ?? '');
    const byFloor = await startOrder(roundtableFloor, floorDb?.url ?? '');
    expect(new Set(byFloor).size).toBe(KEYS.length);
    expect(byFloor).toEqual(byTick);
    // Round robin with a per-user cap of 1: the first round is one job of each of the first 20 users.
    expect(byFloor.slice(0, GLOBAL)).toEqual(KEYS.slice(0, GLOBAL));
  });
});
