/**
 * Large run output (issue 14, item 4): 100 runs of 5 MB each, half of them
 * one single line with no newline, half 64-byte lines, in 64 KiB chunks.
 *
 * Two paths:
 * - the whole node: `createTestRuntime` (PGlite in memory, the simulated
 *   cluster, the virtual clock), so output goes cluster → TaskRunner → board
 *   and is stored on the row with the finish, as in production;
 * - the board alone (`createBoardIndex` with no store), which isolates the
 *   board's own cost per MB and the longest one chunk blocks the loop.
 *
 * Memory is read after two full collections (`gc` is exposed here through
 * the V8 flag, so `npm run bench` needs no node flag), before the 100 runs
 * (after a warm-up run of each kind) and after them. Before the fix a
 * finished single-line run kept its whole line on the card (~24 MiB for
 * 20 MB, per the issue) and work was quadratic in the line's length.
 */
import { performance } from 'node:perf_hooks';
import { createBoardIndex } from '../../src/actors/runtimeBoard.js';
import { defaultCommands, type SimCommand } from '../../src/containers/simulated/commands.js';
import { createTestRuntime } from '../../src/testing/index.js';
import {
  memoryAfterGc,
  noReads,
  runningRows,
  succeededRows,
} from '../../test/support/boardRuns.js';
import { writeResults } from '../stats.js';

const RUNS = 100;
const RUN_BYTES = 5 * 1024 * 1024;
const CHUNK = 64 * 1024;
const MIB = 1024 * 1024;
const STEP = 25;

interface Memory {
  rssMiB: number;
  heapUsedMiB: number;
  externalMiB: number;
}
const memory = (): Memory => {
  const m = memoryAfterGc();
  const r = (n: number) => Math.round((n / MIB) * 10) / 10;
  return { rssMiB: r(m.rss), heapUsedMiB: r(m.heapUsed), externalMiB: r(m.external) };
};

/** Every chunk a fresh string, as a socket would deliver: one shared string would hide a pinned view. */
const chunksOf = (single: boolean): string[] =>
  Array.from({ length: RUN_BYTES / CHUNK }, (_, i) =>
    single ? `${i % 10}`.repeat(CHUNK) : `${`${i % 10}`.repeat(63)}\n`.repeat(CHUNK / 64),
  );

/** `bulk single|lines`: prints RUN_BYTES in 64 KiB chunks, one per virtual millisecond. */
const bulk: SimCommand = (args) => {
  const output = chunksOf(args[0] === 'single').map((text, i) => ({ atMs: i, text }));
  return { output, durationMs: output.length, exitCode: 0 };
};

interface PathResult {
  runs: number;
  mbPerRun: number;
  before: Memory;
  after: Memory;
  /** (after − before) / runs, in KiB: what one finished run still costs the node. */
  heapPerRunKiB: number;
  rssPerRunKiB: number;
  msPerMB: number;
}

/** The figures of RUNS runs that took `ms` (of the path's own work) between two readings. */
const resultOf = (before: Memory, after: Memory, ms: number): PathResult => ({
  runs: RUNS,
  mbPerRun: RUN_BYTES / MIB,
  before,
  after,
  heapPerRunKiB: Math.round(((after.heapUsedMiB - before.heapUsedMiB) * 1024) / RUNS),
  rssPerRunKiB: Math.round(((after.rssMiB - before.rssMiB) * 1024) / RUNS),
  msPerMB: Math.round((ms / ((RUNS * RUN_BYTES) / MIB)) * 1000) / 1000,
});

async function throughRuntime(): Promise<PathResult & { series: Memory[] }> {
  const h = await createTestRuntime({
    commands: { ...defaultCommands, bulk },
    caps: { maxRunning: 10, defaultUserCap: 10 },
  });
  const runAll = async (kinds: readonly string[]) => {
    for (const [i, kind] of kinds.entries())
      await h.runtime.createTask(`user-${i % 10}`, {
        title: `bulk ${i}`,
        image: 'runner:v1',
        command: ['bulk', kind],
      });
    const finished = async () =>
      (await h.sessions()).every((s) => s.status === 'succeeded' || s.status === 'failed');
    while (!(await finished())) await h.advance(50);
  };
  await runAll(['single', 'lines']);
  const before = memory();
  // Checkpoints every STEP runs: a leak grows with each, a flat node does not.
  const series: Memory[] = [];
  let ms = 0;
  for (let done = 0; done < RUNS; done += STEP) {
    const t0 = performance.now();
    await runAll(Array.from({ length: STEP }, (_, i) => (i % 2 === 0 ? 'single' : 'lines')));
    ms += performance.now() - t0;
    series.push(memory());
  }
  const after = series.at(-1) ?? before;
  const sessions = await h.sessions();
  const failed = sessions.filter((s) => s.status !== 'succeeded').length;
  if (failed > 0 || h.errors.length > 0)
    throw new Error(`output bench: ${failed} runs failed, errors: ${String(h.errors[0])}`);
  const cards = h.board();
  if (cards.some((c) => c.lastOutput.some((l) => l.length > 500)))
    throw new Error('output bench: a card line longer than 500 characters');
  await h.close();
  return { ...resultOf(before, after, ms), series };
}

async function throughBoard(): Promise<PathResult & { maxChunkMs: number }> {
  const index = createBoardIndex(noReads);
  let busyMs = 0;
  let maxChunkMs = 0;
  const run = async (n: number, single: boolean) => {
    const { task, session } = runningRows(n);
    await index.apply(session, task);
    for (const chunk of chunksOf(single)) {
      const t0 = performance.now();
      index.appendOutput(session.id, chunk);
      const ms = performance.now() - t0;
      busyMs += ms;
      maxChunkMs = Math.max(maxChunkMs, ms);
    }
    const done = succeededRows(n);
    await index.apply(done.session, done.task, { outputShown: true });
  };
  await run(0, true);
  await run(1, false);
  busyMs = 0;
  maxChunkMs = 0;
  // Lets what the previous section closed finish closing, so its garbage is not counted here.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const before = memory();
  for (let n = 2; n < RUNS + 2; n++) await run(n, n % 2 === 0);
  const after = memory();
  index.close();
  return { ...resultOf(before, after, busyMs), maxChunkMs: Math.round(maxChunkMs * 100) / 100 };
}

export async function run(): Promise<void> {
  // The node first: its RSS is then not the board section's high-water mark.
  const node = await throughRuntime();
  const board = await throughBoard();
  const row = (name: string, r: PathResult, extra: string) =>
    `| ${name} | ${r.before.rssMiB} → ${r.after.rssMiB} | ${r.before.heapUsedMiB} → ${r.after.heapUsedMiB} | ${r.heapPerRunKiB} | ${r.msPerMB} | ${extra} |`;
  const md = [
    '# Large run output',
    '',
    `${RUNS} runs of ${RUN_BYTES / MIB} MiB each (every other one a single line with no newline, the rest 64-byte lines), in 64 KiB chunks. Memory after two full GCs, before the ${RUNS} runs (after one warm-up run of each kind) → after them.`,
    '',
    '| path | RSS MiB | heap used MiB | heap kept per run, KiB | ms per MiB | longest chunk, ms |',
    '|---|---|---|---|---|---|',
    row('board alone (appendOutput)', board, String(board.maxChunkMs)),
    row('whole node (simulated cluster, PGlite, finish stored)', node, '–'),
    '',
    `Whole node, every ${STEP} runs (RSS / heap used / external MiB, external being mostly PGlite's WebAssembly memory, which holds the stored outputs): ${[node.before, ...node.series].map((m) => `${m.rssMiB} / ${m.heapUsedMiB} / ${m.externalMiB}`).join(' → ')}.`,
    '',
    "The whole node's ms per MiB is wall time from the first submit to the last finish, storing each output on its row included. Before the fix (issue 14): a 20 MB single-line run took 4.3 s, blocked the loop 754 ms and kept ~24 MiB per finished run.",
  ].join('\n');
  writeResults('output', { board, node }, md);
  process.stdout.write(`${md}\n`);
}
