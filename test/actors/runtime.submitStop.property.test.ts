/**
 * `runtime.submit` racing `runtime.stop()`, over interleavings drawn by
 * fast-check's scheduler: when each submit is called, when stop() is, when
 * each answer of the store comes back, and whether one answer is lost after
 * its commit (the tick committed, the reply did not arrive: a transient
 * error). Each submit has one of two documented outcomes: it resolves with
 * its task, whose row is in the store, or it rejects with
 * `RuntimeStoppedError` (`RUNTIME_STOPPED`); one whose write was never sent
 * left no row. Never another error, never a promise that does not settle.
 */
import type { PGlite } from '@electric-sql/pglite';
import fc from 'fast-check';
import type { KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { RuntimeStoppedError } from '../../src/actors/runtimeExit.js';
import type { CreatedTask } from '../../src/actors/runtimeTypes.js';
import { connect, type DbHandle } from '../../src/db/index.js';
import { createTestRuntime } from '../../src/testing/index.js';
import { migratedPglite } from '../../src/testing/migratedPglite.js';
import { within } from '../support/within.js';

/** Interleavings tried per run of the suite (each boots a node on PGlite). */
const NUM_RUNS = 40;
/** Real time one interleaving may take before it counts as hanging. */
const CASE_DEADLINE_MS = 10_000;

let pglite: PGlite;
let handle: DbHandle;
beforeAll(async () => {
  pglite = await migratedPglite();
  handle = await connect({ pglite });
}, 30_000);
afterAll(async () => {
  await handle.close();
  await pglite.close();
});

/** The store's answers, each released when the scheduler says; one may be lost after its commit. */
function gatedStore(db: DbHandle['db']) {
  const gate: {
    on: boolean;
    schedule?: (what: string) => Promise<void>;
    loseAnswer: number | null;
    answers: number;
  } = { on: false, loseAnswer: null, answers: 0 };
  const plugin: KyselyPlugin = {
    transformQuery: (args) => args.node,
    transformResult: async (args) => {
      if (!gate.on || gate.schedule === undefined) return args.result;
      const n = gate.answers++;
      await gate.schedule(`store answer ${n}`);
      if (n === gate.loseAnswer)
        throw Object.assign(new Error('read ECONNRESET (test: reply lost after the commit)'), {
          code: 'ECONNRESET',
        });
      return args.result;
    },
  };
  return { db: db.withPlugin(plugin), gate };
}

/**
 * Most event-loop turns a call waits after the scheduler lets it go: a tick
 * leaves a few turns after its first op (the dispatcher's coalescing), so
 * calls land before, during and after the tick that would carry them.
 */
const TURNS = 12;

async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r));
}

type Outcome = { ok: true; created: CreatedTask } | { ok: false; error: unknown };

test('a submit racing stop() commits and resolves, or rejects with RuntimeStoppedError', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.scheduler(),
      fc.array(fc.nat(TURNS), { minLength: 1, maxLength: 4 }),
      fc.nat(2 * TURNS),
      fc.option(fc.nat(6), { nil: null }),
      async (s, submitTurns, stopTurns, loseAnswer) => {
        const store = gatedStore(handle.db);
        const h = await createTestRuntime({ db: store.db });
        try {
          await h.runtime.booted;
          store.gate.schedule = (what) => s.schedule(Promise.resolve(), what);
          store.gate.loseAnswer = loseAnswer;
          store.gate.on = true;
          const outcomes = submitTurns.map((wait, i) =>
            s
              .schedule(Promise.resolve(), `submit ${i}`)
              .then(() => turns(wait))
              .then(() =>
                h.runtime.submit('ann', {
                  title: `t${i}`,
                  image: 'runner:v1',
                  command: ['agent', '30'],
                  key: `k${i}`,
                }),
              )
              .then(
                (created): Outcome => ({ ok: true, created }),
                (error: unknown): Outcome => ({ ok: false, error }),
              ),
          );
          const stopped = s
            .schedule(Promise.resolve(), 'stop')
            .then(() => turns(stopTurns))
            .then(() => h.runtime.stop());
          const all = Promise.all([Promise.all(outcomes), stopped]);
          const [settled] = await within(
            s.waitFor(all),
            'the submits and stop()',
            CASE_DEADLINE_MS,
          );
          store.gate.on = false;
          const rows = await handle.db.selectFrom('tasks').select(['id', 'submit_key']).execute();
          const byKey = new Map(rows.map((r) => [r.submit_key, r.id]));
          settled.forEach((outcome, i) => {
            if (outcome.ok) {
              // Acknowledged: committed.
              expect(byKey.get(`k${i}`)).toBe(outcome.created.task.id);
              return;
            }
            expect(outcome.error).toBeInstanceOf(RuntimeStoppedError);
            const error = outcome.error as RuntimeStoppedError;
            expect(error.code).toBe('RUNTIME_STOPPED');
            expect(error.exit).toEqual({ kind: 'stopped' });
            // Not sent: nothing written. Sent, answer lost: either, as the message says.
            if (error.applied === 'no') expect(byKey.has(`k${i}`)).toBe(false);
          });
        } finally {
          store.gate.on = false;
          await h.close();
        }
      },
    ),
    { numRuns: NUM_RUNS },
  );
}, 300_000);
