import { describe, expect, it } from 'vitest';
import type { BoardCard } from '../../src/board/boardPort.js';
import * as mod from '../../src/ui-server/boardStats.js';
import { BoardStats, HISTORY_MS, SAMPLE_MS } from '../../src/ui-server/boardStats.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/ui-server/boardStats.ts', import.meta.url), mod);

const at = (s: number) => new Date(s * 1000).toISOString();
const base: BoardCard = {
  taskId: 't1',
  userId: 'ann',
  title: 't1',
  column: 'queued',
  sessionId: 's1',
  attempt: 1,
  status: 'queued',
  queued: { position: 1, since: at(0) },
  running: null,
  failure: null,
  exitCode: null,
  lastOutput: [],
  updatedAt: at(0),
};

describe('BoardStats', () => {
  it('records waits, durations and failures from the cards going by', () => {
    const stats = new BoardStats();
    stats.observe(base, 0);
    stats.observe(
      { ...base, column: 'running', status: 'running', queued: null, running: { since: at(30) } },
      30_000,
    );
    stats.observe(
      {
        ...base,
        column: 'done',
        status: 'succeeded',
        running: null,
        queued: null,
        exitCode: 0,
        updatedAt: at(90),
      },
      90_000,
    );
    stats.observe(
      { ...base, taskId: 't2', sessionId: 's2', queued: { position: 1, since: at(90) } },
      90_000,
    );
    stats.observe(
      {
        ...base,
        taskId: 't2',
        sessionId: 's2',
        column: 'running',
        status: 'running',
        queued: null,
        running: { since: at(100) },
      },
      100_000,
    );
    const failed = {
      ...base,
      taskId: 't2',
      sessionId: 's2',
      column: 'failed' as const,
      status: 'failed' as const,
      queued: null,
      failure: { reason: 'exit_code', recoverable: false },
      updatedAt: at(110),
    };
    stats.observe(failed, 110_000);
    stats.observe(failed, 111_000);
    stats.sample(120_000, { queued: 3, running: 1 });
    expect(stats.snapshot(null)).toEqual({
      recentDurationsMs: [60_000, 10_000],
      series: [{ at: 120_000, queued: 3, running: 1, waitP50: 10, waitP95: 30, failures: 1 }],
    });
    // A user gets the durations (numbers only), never the dashboard's series.
    expect(stats.snapshot('ann').series).toEqual([]);
  });

  it('keeps an hour of points', () => {
    const stats = new BoardStats();
    for (let t = 0; t <= 2 * HISTORY_MS; t += SAMPLE_MS) stats.sample(t, { queued: 0, running: 0 });
    const series = stats.snapshot(null).series;
    expect(series[0]!.at).toBe(HISTORY_MS);
    expect(series.at(-1)!.at).toBe(2 * HISTORY_MS);
  });
});
