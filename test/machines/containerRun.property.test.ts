import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { decide, type MaybeTimestamp } from '../../src/machines/adoptPolicy.js';
import type { ContainerRunOutput } from '../../src/machines/containerRun.js';
import { decideOutputRead } from '../../src/machines/outputReadPolicy.js';
import {
  runAdoption,
  runReads,
  type ScriptedObservation,
  type ScriptedRead,
  UNKNOWN_FOREVER,
} from './containerRunHarness.js';

const SESSION_MS = Date.parse('2026-07-14T10:44:00Z');
const IO_TIMEOUT_MS = 60_000;

/** The expected end of an adoption, computed from `decide` alone, step by step in simulated time. */
function expectedEnd(
  script: readonly ScriptedObservation[],
  sessionStartedAt: MaybeTimestamp,
  pollMs: number,
  budgetMs: number,
): {
  output: ContainerRunOutput | { outcome: 'exited'; exitCode: number };
  calls: number;
  at: number;
} {
  let t = 0;
  for (let i = 0; ; i++) {
    const step = script[i] ?? UNKNOWN_FOREVER;
    t += step.latencyMs;
    if (step.kind === 'ok' && step.marker !== null) {
      return { output: { outcome: 'exited', exitCode: step.marker.exitCode }, calls: i + 1, at: t };
    }
    const seen = step.kind === 'ok' ? step.containerStartedAt : null;
    const d = decide(seen, sessionStartedAt, t, budgetMs, step.kind === 'ok' && step.gone === true);
    if (d.kind === 'give_up')
      return { output: { outcome: 'gave_up', reason: d.reason }, calls: i + 1, at: t };
    t += pollMs;
  }
}

const containerStart = fc.oneof(
  fc.integer({ min: -7_200_000, max: -1 }).map((o) => new Date(SESSION_MS + o)),
  fc.constant(new Date(SESSION_MS)),
  fc.constant(new Date(SESSION_MS).toISOString()),
  fc.integer({ min: 1, max: 7_200_000 }).map((o) => new Date(SESSION_MS + o)),
  fc.integer({ min: 1, max: 7_200_000 }).map((o) => new Date(SESSION_MS + o).toISOString()),
  fc.constantFrom(null, undefined, 'garbage', '0001-01-01T00:00:00Z'),
);

const latency = fc.integer({ min: 0, max: IO_TIMEOUT_MS - 1 });

const observation: fc.Arbitrary<ScriptedObservation> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('ok' as const),
      containerStartedAt: containerStart,
      marker: fc.constant(null),
      latencyMs: latency,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('ok' as const),
      containerStartedAt: containerStart,
      marker: fc.integer({ min: 0, max: 255 }).map((exitCode) => ({ exitCode })),
      latencyMs: latency,
      gone: fc.boolean(),
    }),
  },
  {
    // The service or container removed behind the runtime's back.
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('ok' as const),
      containerStartedAt: fc.constant(null),
      marker: fc.constant(null),
      latencyMs: latency,
      gone: fc.constant(true),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('fail' as const), latencyMs: latency }) },
);

const sessionStart = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom<MaybeTimestamp>(
      new Date(SESSION_MS),
      new Date(SESSION_MS).toISOString(),
    ),
  },
  { weight: 1, arbitrary: fc.constant(null) },
);

describe('containerRun adopt loop against decide', () => {
  test.prop(
    [
      fc.array(observation, { maxLength: 30 }),
      sessionStart,
      fc.integer({ min: 1, max: 30_000 }),
      fc.integer({ min: 1, max: 40 }),
      fc.nat(),
    ],
    { numRuns: 300 },
  )(
    'ends at exactly the first observation where a marker is seen or decide gives up, with the same result',
    async (script, sessionStartedAt, pollMs, polls, extra) => {
      // Bounded polls-per-budget keeps a run short; the remainder lands the
      // budget anywhere inside a poll interval.
      const budgetMs = pollMs * polls + (extra % pollMs);
      const run = await runAdoption(script, {
        sessionStartedAt,
        pollMs,
        budgetMs,
        ioTimeoutMs: IO_TIMEOUT_MS,
      });
      const expected = expectedEnd(script, sessionStartedAt, pollMs, budgetMs);
      expect(run.observeCalls).toBe(expected.calls);
      expect(run.finishedAt).toBe(expected.at);
      if (expected.output.outcome === 'exited') {
        expect(run.output).toEqual({ ...expected.output, output: 'the output' });
        expect(run.readOutputCalls).toBe(1);
      } else {
        expect(run.output).toEqual(expected.output);
        expect(run.readOutputCalls).toBe(0);
      }
    },
  );

  test.prop([fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 0, max: 50 }), fc.nat()])(
    'with timestamps unknown forever, gives up with timeout at the first poll whose elapsed reaches the budget',
    async (pollMs, wholePolls, remainder) => {
      // Bounded ratio keeps the loop short; the remainder puts the budget anywhere in a poll interval.
      const budgetMs = Math.max(1, wholePolls * pollMs + (remainder % pollMs));
      const run = await runAdoption([], { sessionStartedAt: null, pollMs, budgetMs });
      const polls = Math.ceil(budgetMs / pollMs);
      expect(run.output).toEqual({ outcome: 'gave_up', reason: 'timeout' });
      expect(run.observeCalls).toBe(polls + 1);
      expect(run.finishedAt).toBe(polls * pollMs);
      expect(run.finishedAt).toBeGreaterThanOrEqual(budgetMs);
      expect(run.finishedAt - pollMs).toBeLessThan(budgetMs);
    },
  );

  it('the expected-end model is not vacuous: it distinguishes an early replacement from a timeout', () => {
    const replaced: ScriptedObservation[] = [
      { kind: 'ok', containerStartedAt: new Date(SESSION_MS - 1), marker: null, latencyMs: 0 },
      { kind: 'ok', containerStartedAt: new Date(SESSION_MS + 1), marker: null, latencyMs: 5 },
    ];
    expect(expectedEnd(replaced, new Date(SESSION_MS), 100, 10_000)).toEqual({
      output: { outcome: 'gave_up', reason: 'container_replaced' },
      calls: 2,
      at: 105,
    });
    expect(expectedEnd([], new Date(SESSION_MS), 100, 250)).toEqual({
      output: { outcome: 'gave_up', reason: 'timeout' },
      calls: 4,
      at: 300,
    });
  });
});

/** The expected end of the reads of an exited run's output, from `decideOutputRead` alone. */
function expectedReads(
  script: readonly ScriptedRead[],
  pollMs: number,
  budgetMs: number,
): {
  outcome: 'exited' | 'READ_OUTPUT_FAILED' | 'READ_OUTPUT_TIMED_OUT';
  reads: number;
  at: number;
} {
  let t = 0;
  let firstFailure: number | null = null;
  for (let i = 0; ; i++) {
    const step = script[i] ?? { kind: 'ok', latencyMs: 0 };
    t += step.kind === 'hang' ? IO_TIMEOUT_MS : step.latencyMs;
    if (step.kind === 'ok') return { outcome: 'exited', reads: i + 1, at: t };
    firstFailure ??= t;
    const code = step.kind === 'hang' ? 'timeout' : step.code;
    const d = decideOutputRead({ code, elapsedMs: t - firstFailure, budgetMs, pollMs });
    if (d.kind === 'give_up') {
      const outcome = step.kind === 'hang' ? 'READ_OUTPUT_TIMED_OUT' : 'READ_OUTPUT_FAILED';
      return { outcome, reads: i + 1, at: t };
    }
    t += d.inMs;
  }
}

const read: fc.Arbitrary<ScriptedRead> = fc.oneof(
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('ok' as const), latencyMs: latency }) },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('error' as const),
      code: fc.constantFrom('unavailable', 'timeout', 'not_found', 'engine', null),
      latencyMs: latency,
    }),
  },
  { weight: 2, arbitrary: fc.constant({ kind: 'hang' as const }) },
);

describe('containerRun output reads against decideOutputRead', () => {
  test.prop(
    [
      fc.array(read, { maxLength: 30 }),
      fc.integer({ min: 1, max: 30_000 }),
      fc.integer({ min: 1, max: 1_000_000 }),
    ],
    { numRuns: 300 },
  )(
    'ends at exactly the read that succeeds or after which the policy gives up, with the same result',
    async (script, pollMs, budgetMs) => {
      const run = await runReads(script, { pollMs, budgetMs, ioTimeoutMs: IO_TIMEOUT_MS });
      const expected = expectedReads(script, pollMs, budgetMs);
      expect(run.readCalls).toBe(expected.reads);
      expect(run.finishedAt).toBe(expected.at);
      if (expected.outcome === 'exited')
        expect(run.output).toEqual({ outcome: 'exited', exitCode: 9, output: 'the output' });
      else
        expect(run.output).toMatchObject({
          outcome: 'failed',
          exitCode: 9,
          error: { code: expected.outcome },
        });
    },
  );
});
