import type { PGlite } from '@electric-sql/pglite';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createTestRuntime } from '../../src/testing/index.js';
import { migratedPglite } from '../../src/testing/migratedPglite.js';
import * as replayable from '../../src/testing/replayableProperty.js';
import {
  assertReplayable,
  ReplayableFailure,
  ReplayableOptionError,
} from '../../src/testing/replayableProperty.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/testing/replayableProperty.ts', import.meta.url), replayable);

const quiet = { log: () => {}, command: 'npx vitest run this.test.ts' };

/** Runs the property once as a suite would and returns the failure it must throw. */
async function failure(run: Promise<unknown>): Promise<ReplayableFailure> {
  const error = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ReplayableFailure);
  return error as ReplayableFailure;
}

/** The environment a user pastes from the failure's replay line. */
function envOf(f: ReplayableFailure, prefix: string): Record<string, string> {
  return { [`${prefix}_SEED`]: String(f.seed), [`${prefix}_PATH`]: f.path };
}

describe('assertReplayable on a pure property', () => {
  // Planted: any element of 50 or more breaks it; the smallest case is [50].
  const arb = fc.array(fc.nat(100), { maxLength: 20 });
  const planted = async (xs: number[]) => xs.every((x) => x < 50);

  test('a failure is shrunk, and its seed and path replay exactly that case first', async () => {
    const lines: string[] = [];
    const f = await failure(
      assertReplayable(arb, planted, {
        ...quiet,
        prefix: 'P',
        env: { P_SEED: '17' },
        log: (l) => lines.push(l),
      }),
    );
    expect(f.counterexample).toEqual([50]);
    expect(f.seed).toBe(17);
    expect(f.replay).toBe(`P_SEED=17 P_PATH='${f.path}' npx vitest run this.test.ts`);
    expect(f.message).toContain(f.replay);
    expect(lines[0]).toContain('seed 17');
    expect(lines.some((l) => l.includes('failed; shrinking'))).toBe(true);

    const seen: number[][] = [];
    const again = await failure(
      assertReplayable(
        arb,
        async (xs) => {
          seen.push(xs);
          return planted(xs);
        },
        { ...quiet, prefix: 'P', env: envOf(f, 'P') },
      ),
    );
    expect(seen[0]).toEqual([50]);
    expect(again.counterexample).toEqual([50]);
    expect(again.path).toBe(f.path);
  });

  test('without a seed each call draws a fresh one and prints it', async () => {
    const lines: string[] = [];
    const a = await assertReplayable(arb, async () => true, {
      ...quiet,
      prefix: 'P',
      env: {},
      numRuns: 3,
      log: (l) => lines.push(l),
    });
    const b = await assertReplayable(arb, async () => true, {
      ...quiet,
      prefix: 'P',
      env: {},
      numRuns: 3,
    });
    expect(a.seed).not.toBe(b.seed);
    expect(lines[0]).toContain(`P_SEED=${a.seed}`);
    expect(a).toMatchObject({ runs: 3, outOfTime: false, path: undefined });
  });

  test('the time budget ends the runs before the count does, and no case is cut short', async () => {
    let t = 0;
    const finished: number[] = [];
    const report = await assertReplayable(
      arb,
      async () => {
        t += 1_000; // each case takes a second of the injected wall clock
        finished.push(t);
        return true;
      },
      { ...quiet, prefix: 'P', env: { P_SEED: '3' }, numRuns: 50, budgetMs: 5_000, now: () => t },
    );
    expect(report).toMatchObject({ runs: 5, outOfTime: true });
    expect(finished).toEqual([1_000, 2_000, 3_000, 4_000, 5_000]);
  });

  test('a budget spent before the first case still runs one, and passes', async () => {
    let t = 0;
    // Time passes before the property starts: no budget is left for any case.
    const report = await assertReplayable(arb, async () => true, {
      ...quiet,
      prefix: 'P',
      env: { P_SEED: '3' },
      budgetMs: 0,
      now: () => (t += 1_000),
    });
    expect(report).toMatchObject({ runs: 1, outOfTime: true });
  });

  test('the shrink budget stops shrinking at a case that still fails, and says where', async () => {
    let t = 0;
    const f = await failure(
      assertReplayable(
        arb,
        async (xs) => {
          t += 1_000;
          return planted(xs);
        },
        { ...quiet, prefix: 'P', env: { P_SEED: '17' }, shrinkBudgetMs: 2_000, now: () => t },
      ),
    );
    expect(f.shrinks).toBeLessThanOrEqual(2);
    expect(await planted(f.counterexample as number[])).toBe(false);
  });

  test('STORM_RUNS-style overrides and bad values are typed errors', async () => {
    const report = await assertReplayable(arb, async () => true, {
      ...quiet,
      prefix: 'P',
      env: { P_SEED: '1', P_RUNS: '2' },
    });
    expect(report.runs).toBe(2);
    await expect(
      assertReplayable(arb, planted, { ...quiet, prefix: 'P', env: { P_PATH: '1:0' } }),
    ).rejects.toBeInstanceOf(ReplayableOptionError);
    await expect(
      assertReplayable(arb, planted, { ...quiet, prefix: 'P', env: { P_SEED: 'x' } }),
    ).rejects.toBeInstanceOf(ReplayableOptionError);
    await expect(
      assertReplayable(arb, planted, { ...quiet, prefix: 'P', env: { P_SEED: '1', P_PATH: 'a' } }),
    ).rejects.toBeInstanceOf(ReplayableOptionError);
  });
});

describe('assertReplayable on a harness scenario', () => {
  let pglite: PGlite;
  beforeAll(async () => {
    pglite = await migratedPglite();
  }, 30_000);
  afterAll(async () => {
    await pglite.close();
  });

  type Step =
    | { kind: 'create'; user: number; seconds: number }
    | { kind: 'advance'; ms: number }
    | { kind: 'deploy' };
  const step: fc.Arbitrary<Step> = fc.oneof(
    fc.record({
      kind: fc.constant('create' as const),
      user: fc.nat(1),
      seconds: fc.integer({ min: 1, max: 30 }),
    }),
    fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 40_000 }) }),
    fc.record({ kind: fc.constant('deploy' as const) }),
  );

  /** What a history did, without the random ids, to compare two runs of it. */
  type Trace = { at: number; rows: string[]; execs: number; failed: boolean };

  test('a planted failure in a user scenario replays the same history from its seed and path', async () => {
    const traces: Trace[] = [];
    // Planted: "no run ever succeeds", which the smallest storm breaks with
    // one create and one long enough advance.
    const scenario = async (steps: Step[]) => {
      const h = await createTestRuntime({ pglite, caps: { maxRunning: 2, defaultUserCap: 2 } });
      try {
        for (const s of steps) {
          if (s.kind === 'create')
            await h.runtime.createTask(`u${s.user}`, {
              title: 't',
              image: 'runner:v1',
              command: ['agent', String(s.seconds)],
            });
          else if (s.kind === 'advance') await h.advance(s.ms);
          else await h.deploy();
          await h.settle();
        }
        const rows = await h.sessions();
        const ok = rows.every((r) => r.status !== 'succeeded');
        traces.push({
          at: h.clock.now(),
          rows: rows.map((r) => `${r.userId}/${r.attempt}/${r.status}/${r.exitCode}`).sort(),
          execs: h.execLog().length,
          failed: !ok,
        });
        return ok;
      } finally {
        await h.close();
      }
    };
    const arb = fc.array(step, { maxLength: 5 });
    const f = await failure(
      assertReplayable(arb, scenario, {
        ...quiet,
        prefix: 'SCN',
        env: { SCN_SEED: '5' },
        budgetMs: 600_000, // the count, not the clock, ends it: the failure must be found
        numRuns: 40,
      }),
    );
    const smallest = f.counterexample as Step[];
    expect(smallest.map((s) => s.kind)).toEqual(['create', 'advance']);
    // The last failing history is the smallest one (shrinking only steps to failures).
    const failingTrace = traces.filter((t) => t.failed).at(-1);

    traces.length = 0;
    const again = await failure(
      assertReplayable(arb, scenario, { ...quiet, prefix: 'SCN', env: envOf(f, 'SCN') }),
    );
    expect(failingTrace).toBeDefined();
    expect(traces[0]).toEqual(failingTrace);
    expect(again.counterexample).toEqual(smallest);
  }, 300_000);
});
