/**
 * A node on a store its test will close under it (test/actors/runtime.storeClosed*.test.ts):
 * the node booted with a job submitted on a virtual clock, whatever the
 * test opened torn down after each test (the runtime killed, the handle and
 * the PGlite closed), and the clock's timers fired for minutes in no real time.
 */
import type { PGlite } from '@electric-sql/pglite';
import { afterEach } from 'vitest';
import { createRuntime } from '../../src/actors/runtime.js';
import type { Runtime, RuntimeOptions } from '../../src/actors/runtimeTypes.js';
import { SimulatedBackend } from '../../src/containers/simulated/SimulatedBackend.js';
import { SimulatedCluster } from '../../src/containers/simulated/SimulatedCluster.js';
import { type DbHandle, migrate } from '../../src/db/index.js';
import { TestClock } from '../../src/testing/index.js';
import { within } from './within.js';

/** Real time a promise may take to settle before the test fails. */
export const SETTLE_DEADLINE_MS = 5_000;

/** What a test opened; put each in as it is opened, and it is closed after the test. */
export interface Opened {
  runtime?: Runtime;
  handle?: DbHandle;
  pglite?: PGlite;
}

/** The suite's record of what each test opened, emptied and closed after each test. */
export function openedPerTest(): Opened {
  const opened: Opened = {};
  afterEach(async () => {
    opened.runtime?.kill();
    await opened.handle?.close();
    if (opened.pglite?.closed === false) await opened.pglite.close();
    delete opened.runtime;
    delete opened.handle;
    delete opened.pglite;
  });
  return opened;
}

/** Lets the event loop turn `n` times (what a fired timer's work needs to settle). */
export async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r));
}

/** Fires every timer of `clock` due within `ms` of virtual time, one at a time. */
export async function fireFor(clock: TestClock, ms: number, turnsEach = 5): Promise<void> {
  const until = clock.now() + ms;
  for (let due = clock.nextDue(until); due !== null; due = clock.nextDue(until)) {
    clock.fireNext(due);
    await turns(turnsEach);
  }
}

/** A migrated node on `handle`, booted, with `task` submitted for ann; and what its onError was told. */
export async function closedStoreNode(
  opened: Opened,
  handle: DbHandle,
  task: { title: string; image: string; command: string[] },
  options: Partial<RuntimeOptions> & { nodeId: string },
) {
  await migrate(handle.db);
  const clock = new TestClock(Date.parse('2026-01-01T00:00:00Z'));
  const errors: unknown[] = [];
  const runtime = await createRuntime({
    db: handle.db,
    backend: new SimulatedBackend(new SimulatedCluster({ clock })),
    clock,
    onError: (error) => errors.push(error),
    ...options,
  });
  opened.runtime = runtime;
  await within(runtime.booted, 'booted', SETTLE_DEADLINE_MS);
  await within(runtime.submit('ann', task), 'submit', SETTLE_DEADLINE_MS);
  return { runtime, clock, errors };
}
