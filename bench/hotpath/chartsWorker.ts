/**
 * The floor under the hot path: a job's two statecharts alone. One
 * process runs the TaskRunner chart with its ContainerRun child, as the
 * runtime does (`taskRunnerMachine` from src/machines of the tree named by
 * `--root`, the child invoked by the parent), with every I/O action answered
 * at once on the next microtask (the runtime's `answerWith` does the same
 * after the I/O): load -> hold -> start -> exited -> read the output ->
 * finalize -> done. No database, no backend, no supervisor, no board: what
 * is left is XState's work for the ~8 events and two actors a job takes.
 *
 * The runtime cannot spend less per job than this while every job is a
 * TaskRunner actor with a ContainerRun child (docs/runner-pool.md, what
 * bounds throughput). Twenty jobs run at a time (the bench's global cap).
 *
 * Prints one JSON line on stdout, as hotpathWorker.ts:
 * `{ windows: [{ jobs, wallMs, cpuUs, pgliteUs: 0, loopBusy, tickOut: null }] }`.
 */
import { performance as perfHooks } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { type AnyActorLogic, type AnyActorRef, type AnyEventObject, createActor } from 'xstate';
import type { HotpathWindow } from './hotpathWindow.js';

/** The loop's busy share (not on the DOM type of the global `performance`). */
const eventLoopUtilization = perfHooks.eventLoopUtilization.bind(perfHooks);

const { values: args } = parseArgs({
  options: {
    root: { type: 'string' },
    jobs: { type: 'string', default: '2000' },
    windows: { type: 'string', default: '3' },
  },
});
const root = args.root ?? process.cwd();
const JOBS = Number(args.jobs);
const WINDOWS = Number(args.windows);
const AT_ONCE = 20;

const from = async <T>(path: string): Promise<T> =>
  (await import(pathToFileURL(`${root}/${path}`).href)) as T;

// The charts come from the measured tree (a baseline worktree shares this
// checkout's node_modules, so XState is the same on both sides).
interface Providable {
  provide(impl: { actions?: object; actors?: object }): AnyActorLogic;
}
const { taskRunnerMachine } = await from<{ taskRunnerMachine: Providable }>(
  'src/machines/taskRunner.ts',
);
const { containerRunMachine } = await from<{ containerRunMachine: Providable }>(
  'src/machines/containerRun.ts',
);

type Self = { self: AnyActorRef };
/** An I/O action that answers on the next microtask, as the runtime's do after their I/O. */
const answers =
  (event: AnyEventObject) =>
  ({ self }: Self): void => {
    queueMicrotask(() => self.send(event));
  };
const containerRun = containerRunMachine.provide({
  actions: {
    startRun: answers({
      type: 'roundtable.run.startRun.done',
      output: { handle: 'svc', startedAt: null },
    }),
    attach: answers({ type: 'roundtable.run.exited', exitCode: 0 }),
    readOutput: answers({ type: 'roundtable.run.readOutput.done', output: '' }),
    observe: () => {},
  },
});
const taskRunner = taskRunnerMachine.provide({
  actors: { containerRun },
  actions: {
    loadRow: answers({ type: 'roundtable.runner.loadRow.done', output: { kind: 'run' } }),
    finalize: answers({ type: 'roundtable.runner.finalize.done', output: 'finished' }),
    adopt: () => {},
    stopRun: () => {},
    hold: () => {},
    releaseSlot: () => {},
  },
});

let failed = 0;
const oneJob = (sessionId: string): Promise<void> =>
  new Promise((resolve) => {
    const actor = createActor(taskRunner, {
      input: { sessionId, userId: 'u', start: 'granted', pollMs: 1000, adoptBudgetMs: 900_000 },
    });
    actor.subscribe({
      complete: () => {
        const out = actor.getSnapshot().output as { ending?: string } | undefined;
        if (out?.ending !== 'finished') failed += 1;
        resolve();
      },
      error: () => {
        failed += 1;
        resolve();
      },
    });
    actor.start();
  });

const windows: HotpathWindow[] = [];
for (let w = 0; w <= WINDOWS; w++) {
  // Window 0 warms the JIT; it is not reported.
  const jobs = w === 0 ? Math.min(2000, JOBS) : JOBS;
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < jobs) await oneJob(`w${w}s${next++}`);
  };
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const loop0 = eventLoopUtilization();
  await Promise.all(Array.from({ length: AT_ONCE }, lane));
  const wallMs = performance.now() - t0;
  const c = process.cpuUsage(c0);
  const loopBusy = eventLoopUtilization(loop0).utilization;
  if (w > 0)
    windows.push({ jobs, wallMs, cpuUs: c.user + c.system, pgliteUs: 0, loopBusy, tickOut: null });
}
// A chart that did not reach `finished` means the stand-in answers no longer
// drive it to the end: the figure would be of a shorter path, so it fails.
if (failed > 0) {
  process.stderr.write(`charts worker: ${failed} jobs did not finish\n`);
  process.exit(1);
}
process.stdout.write(`${JSON.stringify({ windows, errors: 0 })}\n`);
