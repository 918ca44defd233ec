/**
 * Supervision overhead: crash-to-replacement time, start+stop of 10,000
 * supervised actors vs bare createActor, heap bytes per idle actor.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { type AnyActorRef, createActor, setup } from 'xstate';
import { startDynamicSupervisor, startSupervisor } from '../../src/supervisor/index.js';
import { median, writeResults } from '../stats.js';

const idle = setup({
  actions: {
    boom: () => {
      throw new Error('boom');
    },
  },
}).createMachine({ on: { CRASH: { actions: 'boom' }, PING: {} } });

const N = 10_000;
const RUNS = 7;
// `npm run bench` runs without --expose-gc; turning the flag on at runtime and
// fetching gc from a fresh context makes the heap numbers meaningful anyway.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as (() => void) | undefined;

async function crashToReplacement(runs: number): Promise<number[]> {
  const sup = await startSupervisor({
    intensity: runs + 1,
    children: [{ id: 'w', start: { logic: idle } }],
  });
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const before = sup.child('w') as AnyActorRef;
    const t0 = process.hrtime.bigint();
    before.send({ type: 'CRASH' });
    const after = sup.child('w') as AnyActorRef;
    after.send({ type: 'PING' });
    const t1 = process.hrtime.bigint();
    if (after === before || after.getSnapshot().status !== 'active')
      throw new Error('not replaced');
    out.push(Number(t1 - t0) / 1e6);
  }
  await sup.shutdown();
  return out;
}

async function supervisedStartStop(): Promise<number> {
  const t0 = performance.now();
  const sup = await startDynamicSupervisor();
  for (let i = 0; i < N; i++)
    await sup.startChild({ id: `w${i}`, start: { logic: idle }, shutdown: 'brutal_kill' });
  await sup.shutdown();
  return performance.now() - t0;
}

function bareStartStop(): number {
  const t0 = performance.now();
  const actors: AnyActorRef[] = [];
  for (let i = 0; i < N; i++) {
    const a = createActor(idle);
    a.subscribe({ error: () => {} });
    actors.push(a.start());
  }
  for (let i = actors.length - 1; i >= 0; i--) actors[i]!.stop();
  return performance.now() - t0;
}

function heap(): number {
  gc?.();
  return process.memoryUsage().heapUsed;
}

async function heapPerActor(): Promise<{
  supervised: number;
  bare: number;
  bareWithErrorObserver: number;
}> {
  const h0 = heap();
  const bare: AnyActorRef[] = [];
  for (let i = 0; i < N; i++) bare.push(createActor(idle).start());
  const h1 = heap();
  for (const a of bare) a.stop();
  bare.length = 0;
  // What an unsupervised actor costs once it has the error observer it needs
  // so that a crash is not an uncaught exception (the supervisor adds one).
  const o0 = heap();
  for (let i = 0; i < N; i++) {
    const a = createActor(idle);
    a.subscribe({ error: () => {} });
    bare.push(a.start());
  }
  const o1 = heap();
  for (const a of bare) a.stop();
  bare.length = 0;
  const h2 = heap();
  const sup = await startDynamicSupervisor();
  for (let i = 0; i < N; i++)
    await sup.startChild({ id: `w${i}`, start: { logic: idle }, shutdown: 'brutal_kill' });
  const h3 = heap();
  await sup.shutdown();
  return { bare: (h1 - h0) / N, bareWithErrorObserver: (o1 - o0) / N, supervised: (h3 - h2) / N };
}

export async function run(): Promise<void> {
  const restarts = await crashToReplacement(2000);
  const sup: number[] = [];
  const bare: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    // A full collection before each timed run, so one side's garbage is not
    // collected on the other side's clock.
    gc?.();
    sup.push(await supervisedStartStop());
    gc?.();
    bare.push(bareStartStop());
  }
  const mem = await heapPerActor();
  const data = {
    crashToReplacementMs: { median: median(restarts), runs: restarts.length },
    startStop10k: {
      supervisedMs: median(sup),
      bareMs: median(bare),
      ratio: median(sup) / median(bare),
      // The machine is shared: every run, so the spread can be judged.
      supervisedRunsMs: sup,
      bareRunsMs: bare,
      runRatios: sup.map((s, i) => s / bare[i]!),
    },
    heapBytesPerIdleActor: {
      ...mem,
      ratio: mem.supervised / mem.bare,
      ratioToBareWithErrorObserver: mem.supervised / mem.bareWithErrorObserver,
      gcExposed: gc !== undefined,
    },
  };
  const range = (v: number[]) => `${Math.min(...v).toFixed(0)}–${Math.max(...v).toFixed(0)}`;
  const ratios = data.startStop10k.runRatios;
  const md = [
    '| measure | supervised | bare | ratio |',
    '|---|---|---|---|',
    `| crash to replacement accepting events (median ms) | ${data.crashToReplacementMs.median.toFixed(4)} | - | - |`,
    `| start+stop ${N} actors (median of ${RUNS}, ms) | ${median(sup).toFixed(1)} | ${median(bare).toFixed(1)} | ${data.startStop10k.ratio.toFixed(2)} |`,
    `| start+stop, range over the ${RUNS} runs (ms; per-run ratio) | ${range(sup)} | ${range(bare)} | ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)} |`,
    `| heap bytes per idle actor | ${mem.supervised.toFixed(0)} | ${mem.bare.toFixed(0)} | ${data.heapBytesPerIdleActor.ratio.toFixed(2)} |`,
    `| heap bytes per idle actor, bare with an error observer | ${mem.supervised.toFixed(0)} | ${mem.bareWithErrorObserver.toFixed(0)} | ${data.heapBytesPerIdleActor.ratioToBareWithErrorObserver.toFixed(2)} |`,
  ].join('\n');
  process.stdout.write(`${md}\n`);
  writeResults('supervisor', data, `# supervisor\n\n${md}`);
}
