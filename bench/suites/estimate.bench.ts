/**
 * The start estimates' error on the demo workload. The demo's plan (its
 * users, caps, commands and events: src/cli/demoPlan.ts) plays on a whole
 * runtime (PGlite, the simulated cluster) on a virtual clock, so the run is
 * the same every time and the machine's load does not enter it. Every
 * virtual second, each viewer's estimate for each queued card is taken as
 * the page takes it (its cards, the pool as the server shows that viewer,
 * the server's recent durations: estimateInputFrom, then estimateStarts);
 * when the card gets its runner, every estimate it had is compared with
 * that moment.
 *
 * Absolute error: |estimated start - actual start|. Relative error: that
 * over the wait that was actually left, on samples with at least 10 s left
 * (nearer, any error is a large ratio of nothing).
 */
import { pino } from 'pino';
import type { PoolSnapshot } from '../../src/board/boardPort.js';
import { cliDefaults } from '../../src/cli/cliConfig.js';
import { demoPlan } from '../../src/cli/demoPlan.js';
import { runDemoWorkload } from '../../src/cli/runDemoWorkload.js';
import { estimateInputFrom } from '../../src/client/estimateInput.js';
import { estimateStarts, type StartEstimateInput } from '../../src/client/estimateStart.js';
import { createTestRuntime } from '../../src/testing/createTestRuntime.js';
import { BoardStats } from '../../src/ui-server/boardStats.js';
import { median, percentile, writeResults } from '../stats.js';

/** Shortest wait left for a sample to count in the relative error. */
const RELATIVE_FROM_MS = 10_000;
/** Virtual seconds before giving up on the workload finishing. */
const MAX_SECONDS = 3_600;

/** One viewer's board at one virtual second: the estimator's input, and each queued card's session. */
export interface BoardMoment {
  viewer: string;
  input: StartEstimateInput;
  sessionOf: Record<string, string>;
}

export interface EstimateError {
  workload: string;
  viewer: 'admin' | 'user';
  samples: number;
  /** Seconds the cards spent queued, and how many of them had an estimate. */
  queuedSeconds: number;
  estimatedSeconds: number;
  absMedianS: number;
  absP90S: number;
  relSamples: number;
  relMedian: number;
  relP90: number;
}

/** Plays the demo's plan with `tasksPerUser`; every viewer's board each second, and when each session started. */
export async function playDemo(tasksPerUser: number) {
  const config = cliDefaults();
  const users = config.demo.users;
  const t = await createTestRuntime({
    caps: config.caps,
    nodes: Array.from({ length: config.simulated.nodes }, (_, i) => `sim-${i + 1}`),
    rescheduleDelayMs: config.simulated.rescheduleDelayMs,
  });
  const stats = new BoardStats();
  const starts = new Map<string, number>();
  // What the server's stats see: every card change, as it is committed.
  t.runtime.subscribe((card) => {
    stats.observe(card, t.clock.now());
    if (card.running !== null && !starts.has(card.sessionId)) {
      starts.set(card.sessionId, Date.parse(card.running.since));
    }
  });
  const stop = runDemoWorkload(
    t.runtime,
    t.cluster,
    demoPlan({ users, tasksPerUser }),
    pino({ level: 'silent' }),
    {
      setTimeout: (fn, ms) => t.clock.setTimeout(fn, ms),
      clearTimeout: (h) => t.clock.clearTimeout(h),
    },
  );
  const moments: BoardMoment[] = [];
  for (let s = 0; s < MAX_SECONDS; s += 1) {
    await t.advance(1000);
    const now = t.clock.now();
    const cards = t.runtime.cards(null);
    const pool = t.runtime.poolSnapshot();
    const durations = stats.snapshot(null).recentDurationsMs;
    for (const viewer of [null, ...users]) {
      const visible = viewer === null ? cards : cards.filter((c) => c.userId === viewer);
      const shown: PoolSnapshot =
        viewer === null ? pool : { ...pool, users: pool.users.filter((u) => u.userId === viewer) };
      const sessionOf: Record<string, string> = {};
      for (const c of visible) if (c.queued !== null) sessionOf[c.taskId] = c.sessionId;
      moments.push({
        viewer: viewer ?? 'admin',
        input: estimateInputFrom(visible, shown, durations, now),
        sessionOf,
      });
    }
    if (s > 60 && cards.every((c) => c.queued === null && c.running === null)) break;
  }
  stop();
  await t.close();
  return { moments, starts };
}

/** The error of `estimate` over the moments of one view. */
export function errorsOf(
  workload: string,
  viewer: 'admin' | 'user',
  played: Awaited<ReturnType<typeof playDemo>>,
  estimate: (input: StartEstimateInput) => Record<string, number> = estimateStarts,
): EstimateError {
  const mine = (v: string) => (viewer === 'admin' ? v === 'admin' : v !== 'admin');
  const abs: number[] = [];
  const rel: number[] = [];
  let queuedSeconds = 0;
  let estimatedSeconds = 0;
  for (const m of played.moments) {
    if (!mine(m.viewer)) continue;
    const est = estimate(m.input);
    for (const [taskId, sessionId] of Object.entries(m.sessionOf)) {
      queuedSeconds += 1;
      const ms = est[taskId];
      if (ms === undefined) continue;
      estimatedSeconds += 1;
      const actual = played.starts.get(sessionId);
      if (actual === undefined) continue; // cancelled while queued: it never started
      const error = Math.abs(m.input.now + ms - actual);
      abs.push(error / 1000);
      if (actual - m.input.now >= RELATIVE_FROM_MS) rel.push(error / (actual - m.input.now));
    }
  }
  const round = (v: number, d = 1) => Math.round(v * 10 ** d) / 10 ** d;
  return {
    workload,
    viewer,
    samples: abs.length,
    queuedSeconds,
    estimatedSeconds,
    absMedianS: round(median(abs)),
    absP90S: round(percentile(abs, 90)),
    relSamples: rel.length,
    relMedian: rel.length === 0 ? 0 : round(median(rel), 2),
    relP90: rel.length === 0 ? 0 : round(percentile(rel, 90), 2),
  };
}

/** The error on the demo's plan, at its size and at four times its size. */
export async function measureEstimateError(): Promise<EstimateError[]> {
  const out: EstimateError[] = [];
  const config = cliDefaults();
  for (const tasksPerUser of [config.demo.tasksPerUser, config.demo.tasksPerUser * 4]) {
    const workload = `demo, ${config.demo.users.length} users × ${tasksPerUser} tasks`;
    const played = await playDemo(tasksPerUser);
    out.push(errorsOf(workload, 'admin', played), errorsOf(workload, 'user', played));
  }
  return out;
}

export async function run(): Promise<void> {
  const rows = await measureEstimateError();
  const config = cliDefaults();
  const table = rows
    .map(
      (r) =>
        `| ${r.workload} | ${r.viewer} | ${r.samples} | ${r.estimatedSeconds}/${r.queuedSeconds} | ${r.absMedianS} | ${r.absP90S} | ${r.relSamples} | ${r.relMedian} | ${r.relP90} |`,
    )
    .join('\n');
  const md = `# Start estimates: error on the demo workload

The demo's plan (\`src/cli/demoPlan.ts\`: users ${config.demo.users.join(', ')}; caps
${config.caps.maxRunning} runners, ${config.caps.defaultUserCap} per user, ${config.demo.users[0]} raised to 3;
commands \`agent\` 12–18 s, \`fail\` and \`echo\` at once; a cancel, a reschedule
and a retry) on a whole runtime (PGlite, simulated cluster of
${config.simulated.nodes}) on a virtual clock: the same every run, untouched by
the machine's load. Each virtual second, every viewer's estimate for every
queued card, taken as the page takes it (\`estimateInputFrom\` then
\`estimateStarts\`), is compared with the moment the card got its runner.
"admin" sees every card; "user" pools the samples of the three users'
own views (others' runs count only as the pool's totals). Estimated
seconds: queued card-seconds that had an estimate (none before the first
run ends). Relative error: over the wait actually left, on samples with at
least 10 s left.

| workload | view | samples | estimated s / queued s | abs median (s) | abs p90 (s) | rel samples | rel median | rel p90 |
|---|---|---|---|---|---|---|---|---|
${table}

\`npm run bench -- estimate\` (bench/suites/estimate.bench.ts).
`;
  writeResults('estimate', rows, md);
  process.stdout.write(md);
}
