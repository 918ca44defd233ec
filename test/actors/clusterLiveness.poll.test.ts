/**
 * The watch's poll on a fake store: ONE statement per poll (the rows and
 * `pg_locks` together; every node polls 4 times a second, so a second
 * statement is a second commit each time), none touching `pg_locks` without
 * a lock, and a failed reading judges nobody: it is reported, `isAlive`
 * rejects rather than saying dead, and no DOWN comes of it.
 */
import { expect, it } from 'vitest';
import { ClusterLiveness, type ClusterLivenessOptions } from '../../src/actors/clusterLiveness.js';
import { type BootLock, bootLockKey } from '../../src/db/index.js';
import type { DeathReason } from '../../src/machines/livenessPolicy.js';
import { TestClock } from '../../src/testing/TestClock.js';
import { fakeDb } from './fakeDb.js';

const POLL_MS = 250;
const ME = 'a@1';
const PEER = 'b@1';

/** A boot lock that is held and stays so. */
const heldLock: BootLock = { state: () => 'held', release: async () => {}, drop: () => {} };

function world(withLock: boolean, periodMs?: () => number) {
  const clock = new TestClock();
  const state = { held: new Set([bootLockKey(ME), bootLockKey(PEER)]), fail: false, peer: true };
  const row = (owner: string) => ({
    owner,
    node_id: owner.slice(0, owner.indexOf('@')),
    started_at: new Date(clock.now() - 1_000),
    beat_at: new Date(clock.now()),
    boot_lock: withLock,
    replaced: false,
  });
  const { db, seen } = fakeDb(async (text) => {
    if (state.fail) throw new Error('connection terminated');
    const rows = state.peer ? [row(ME), row(PEER)] : [row(ME)];
    if (!text.includes('pg_locks')) return { rows };
    return { rows: rows.map((r) => ({ ...r, keys: [...state.held].map(String) })) };
  });
  const errors: unknown[] = [];
  const downs: Array<[string, DeathReason]> = [];
  /** Each DOWN's `atStart`: dead at the watch's first reading already. */
  const atStart: boolean[] = [];
  const options: ClusterLivenessOptions = {
    db,
    owner: ME,
    nodeId: 'a',
    clock,
    pollMs: POLL_MS,
    staleAfterMs: 60_000,
    bootLock: withLock ? { holdBootLock: async () => heldLock } : undefined,
    onDown: (owner, reason, start) => {
      downs.push([owner, reason]);
      atStart.push(start);
    },
    onSelf: () => {},
    onError: (e) => errors.push(e),
    track: (work) => work,
    ...(periodMs ? { periodMs } : {}),
  };
  const cluster = new ClusterLiveness(options);
  /** Fires the next poll and waits for it to have armed the one after. */
  const poll = async () => {
    expect(clock.fireNext(clock.now() + POLL_MS)).toBe(true);
    for (let i = 0; i < 100 && clock.pending() === 0; i += 1)
      await new Promise((r) => setImmediate(r));
    expect(clock.pending()).toBe(1);
  };
  return { clock, state, seen, errors, downs, atStart, cluster, poll };
}

it('each poll is one statement, reading the rows and pg_locks together', async () => {
  const w = world(true);
  await w.cluster.start();
  expect(w.cluster.watching).toBe(true);
  expect(w.seen.length).toBe(1);
  for (let i = 0; i < 5; i += 1) {
    const before = w.seen.length;
    await w.poll();
    expect(w.seen.length - before).toBe(1);
  }
  for (const text of w.seen) {
    expect(text).toContain('node_heartbeats');
    expect(text).toContain('pg_locks');
  }
  // Right after a poll the reading is fresh: the peer is judged without a statement.
  expect(await w.cluster.isAlive(PEER)).toBe(true);
  expect(w.seen.length).toBe(6);
  // Later on, one statement answers it.
  w.clock.fireNext(w.clock.now() + POLL_MS / 2 + 1);
  expect(await w.cluster.isAlive(PEER)).toBe(true);
  expect(w.seen.length).toBe(7);
  expect(w.errors).toEqual([]);
  await w.cluster.stop();
});

it('a failed reading is reported and judges nobody; the next one that succeeds does', async () => {
  const w = world(true);
  await w.cluster.start();
  // The peer's lock goes while the store cannot be read.
  w.state.held.delete(bootLockKey(PEER));
  w.state.fail = true;
  await w.poll();
  expect(w.errors.map((e) => (e as Error).message)).toEqual(['connection terminated']);
  expect(w.downs).toEqual([]);
  // Asked once the last reading is stale: a rejection, never "dead".
  w.clock.fireNext(w.clock.now() + POLL_MS);
  await expect(w.cluster.isAlive(PEER)).rejects.toThrow('connection terminated');
  await expect(w.cluster.nodes()).rejects.toThrow('connection terminated');
  expect(w.downs).toEqual([]);
  w.state.fail = false;
  await w.poll();
  expect(w.downs).toEqual([[PEER, 'lock_released']]);
  expect(await w.cluster.isAlive(PEER)).toBe(false);
  await w.cluster.stop();
});

it('says dead only from a reading begun after the question: a peer that booted since the last look is alive', async () => {
  const w = world(true);
  w.state.peer = false;
  w.state.held.delete(bootLockKey(PEER));
  await w.cluster.start();
  // The peer boots (lock, then row) and claims a run right after that look;
  // the Reconciler reads the row and asks while the look is still fresh.
  w.state.peer = true;
  w.state.held.add(bootLockKey(PEER));
  const before = w.seen.length;
  expect(await w.cluster.isAlive(PEER)).toBe(true);
  expect(w.seen.length).toBe(before + 1);
  // Its lock lost and taken again between a look and the question: alive too.
  w.state.held.delete(bootLockKey(PEER));
  await w.poll();
  expect(w.downs).toEqual([[PEER, 'lock_released']]);
  w.state.held.add(bootLockKey(PEER));
  expect(await w.cluster.isAlive(PEER)).toBe(true);
  // Dead for real: the look says so, and so does the question's own read.
  w.state.held.delete(bootLockKey(PEER));
  await w.poll();
  const asked = w.seen.length;
  expect(await w.cluster.isAlive(PEER)).toBe(false);
  expect(w.seen.length).toBe(asked + 1);
  // Questions asked together share one read.
  const again = w.seen.length;
  expect(await Promise.all([w.cluster.isAlive(PEER), w.cluster.isAlive(PEER)])).toEqual([
    false,
    false,
  ]);
  expect(w.seen.length).toBe(again + 1);
  expect(w.errors).toEqual([]);
  await w.cluster.stop();
});

it('without a lock there is no watch, and a reading is one statement that leaves pg_locks alone', async () => {
  const w = world(false);
  await w.cluster.start();
  expect(w.cluster.watching).toBe(false);
  expect(w.seen).toEqual([]);
  expect(w.clock.pending()).toBe(0);
  const nodes = await w.cluster.nodes();
  expect(nodes.map((n) => [n.owner, n.lock, n.liveness])).toEqual([
    [ME, 'unknown', 'alive'],
    [PEER, 'unknown', 'alive'],
  ]);
  expect(w.seen.length).toBe(1);
  expect(w.seen[0]).toContain('node_heartbeats');
  expect(w.seen[0]).not.toContain('pg_locks');
});

it('looks as often as its period says now (a follower less often), and reads afresh on demand', async () => {
  let period = 4 * POLL_MS;
  const w = world(true, () => period);
  await w.cluster.start();
  const polls = w.seen.length;
  // A follower's period: nothing before it is over.
  expect(w.clock.fireNext(w.clock.now() + 4 * POLL_MS - 1)).toBe(false);
  expect(w.clock.fireNext(w.clock.now() + 1)).toBe(true);
  for (let i = 0; i < 100 && w.clock.pending() === 0; i += 1)
    await new Promise((r) => setImmediate(r));
  expect(w.seen.length).toBe(polls + 1);
  // An adopt check a period later does not wait for the poll: it reads.
  w.clock.fireNext(w.clock.now() + POLL_MS);
  const before = w.seen.length;
  expect(await w.cluster.isAlive(PEER)).toBe(true);
  expect(w.seen.length).toBe(before + 1);
  // It leads now: the look after the pending one comes a leader's period after it.
  period = POLL_MS;
  expect(w.clock.fireNext(w.clock.now() + 3 * POLL_MS)).toBe(true);
  for (let i = 0; i < 100 && w.clock.pending() === 0; i += 1)
    await new Promise((r) => setImmediate(r));
  await w.poll();
  w.cluster.kill();
});

it('a boot already dead at the first reading is a DOWN said as old news; one that dies later is not', async () => {
  const w = world(true);
  // The peer's row is there, its lock gone: it died before this boot came up.
  w.state.held.delete(bootLockKey(PEER));
  await w.cluster.start();
  await w.poll();
  expect(w.downs).toEqual([[PEER, 'lock_released']]);
  expect(w.atStart).toEqual([true]);
  // Back, then dead again while this boot watches: news.
  w.state.held.add(bootLockKey(PEER));
  await w.poll();
  w.state.held.delete(bootLockKey(PEER));
  await w.poll();
  expect(w.downs).toEqual([
    [PEER, 'lock_released'],
    [PEER, 'lock_released'],
  ]);
  expect(w.atStart).toEqual([true, false]);
  await w.cluster.stop();
});
