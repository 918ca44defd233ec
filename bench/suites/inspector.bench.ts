/**
 * What inspection costs: throughput of many supervised actors processing
 * events with the inspector off; with the inspector's gate (what the node
 * uses: supervision events always, XState's frames only while a viewer is
 * connected) and no viewer; with one live viewer (following one actor in
 * detail), which opens the gate; with one viewer that never reads (a
 * stalled socket); with the always-on observer and no viewer (the shape
 * before the gate); and with the Stately bridge pointed at nothing.
 *
 * The workload is our own supervised tree (a one_for_one supervisor over
 * ACTORS machines that assign on every event), fed in batches with a
 * macrotask between batches in every mode, so timers (the inspector's
 * flush) get their turn as they would in a server.
 */
import { cpus, loadavg } from 'node:os';
import { WebSocket } from 'ws';
import { type AnyActorRef, assign, type InspectionEvent, setup } from 'xstate';
import { startSupervisor } from '../../src/supervisor/index.js';
import type { InspectionGate } from '../../src/supervisor/inspectionGate.js';
import { createInspector } from '../../src/ui-server/inspector/createInspector.js';
import {
  BEARER_SUBPROTOCOL_PREFIX,
  INSPECT_SUBPROTOCOL,
  INSPECT_WS_PATH,
} from '../../src/ui-server/inspector/inspectorProtocol.js';
import { startInspectorServer } from '../../src/ui-server/inspector/startInspectorServer.js';
import { median, writeResults } from '../stats.js';

const ACTORS = 200;
const EVENTS = 100_000;
const BATCH = 1000;
const RUNS = 5;
const ADMIN = 'admin-token-0123456789';

const counter = setup({
  types: {} as { context: { n: number; last: string }; events: { type: 'TICK' | 'TOCK' } },
}).createMachine({
  id: 'counter',
  context: { n: 0, last: '' },
  initial: 'a',
  states: {
    a: { on: { TICK: { target: 'b', actions: assign({ n: ({ context }) => context.n + 1 }) } } },
    b: {
      on: {
        TOCK: {
          target: 'a',
          actions: assign({ n: ({ context }) => context.n + 1, last: ({ event }) => event.type }),
        },
      },
    },
  },
});

type Mode =
  | 'off'
  | 'noop observer'
  | 'no viewer'
  | 'one viewer'
  | 'stalled viewer'
  | 'observer always on, no viewer';
/** `noop observer` separates XState's own cost of inspection from ours. */
const MODES: Mode[] = [
  'off',
  'noop observer',
  'no viewer',
  'one viewer',
  'stalled viewer',
  'observer always on, no viewer',
];
const silent = { warn: () => {} };

const macrotask = () => new Promise<void>((r) => setImmediate(r));

interface Sample {
  /** Events per second of this process's CPU time: robust to other load on the machine. */
  eventsPerCpuSec: number;
  eventsPerSec: number;
  framesToViewer: number;
  bytesToViewer: number;
}

async function once(mode: Mode): Promise<Sample> {
  const inspector =
    mode === 'off' || mode === 'noop observer' ? null : createInspector({ logger: silent });
  let inspect: ((e: InspectionEvent) => void) | InspectionGate | undefined =
    mode === 'observer always on, no viewer' ? inspector?.observer : inspector?.gate;
  if (mode === 'noop observer') inspect = () => {};
  const sup = await startSupervisor(
    {
      id: 'bench',
      children: Array.from({ length: ACTORS }, (_, i) => ({
        id: `c${i}`,
        start: { logic: counter },
      })),
    },
    inspect ? { inspect } : {},
  );
  const refs = sup.whichChildren().map((c) => c.ref as AnyActorRef);

  let server: Awaited<ReturnType<typeof startInspectorServer>> | null = null;
  let client: WebSocket | null = null;
  let frames = 0;
  let bytes = 0;
  if (inspector && (mode === 'one viewer' || mode === 'stalled viewer')) {
    server = await startInspectorServer({
      inspector,
      tokens: { admin: ADMIN },
      port: 0,
      host: '127.0.0.1',
    });
    const { port } = new URL(server.url);
    client = new WebSocket(`ws://127.0.0.1:${port}${INSPECT_WS_PATH}`, [
      INSPECT_SUBPROTOCOL,
      BEARER_SUBPROTOCOL_PREFIX + ADMIN,
    ]);
    const c = client;
    c.on('message', (d: Buffer) => {
      frames += 1;
      bytes += d.length;
    });
    await new Promise<void>((resolve, reject) => {
      c.once('open', () => resolve());
      c.once('error', reject);
    });
    c.send(JSON.stringify({ type: 'select', sessionId: refs[0]!.sessionId }));
    await macrotask();
    if (mode === 'stalled viewer') {
      // Stop reading: the server's socket buffer fills and the hub must skip it.
      (c as unknown as { _socket: { pause(): void } })._socket.pause();
    }
  }

  const t0 = performance.now();
  const c0 = process.cpuUsage();
  for (let i = 0; i < EVENTS; i++) {
    refs[i % ACTORS]!.send({ type: (i / ACTORS) % 2 < 1 ? 'TICK' : 'TOCK' });
    if (i % BATCH === BATCH - 1) await macrotask();
  }
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(c0);
  const cpuMs = (cpu.user + cpu.system) / 1000;

  client?.terminate();
  await server?.close();
  inspector?.close();
  await sup.shutdown();
  return {
    eventsPerCpuSec: (EVENTS / cpuMs) * 1000,
    eventsPerSec: (EVENTS / ms) * 1000,
    framesToViewer: frames,
    bytesToViewer: bytes,
  };
}

export async function run(): Promise<void> {
  // Warm up every path once (JIT, the page bundle) before measuring.
  for (const m of MODES) await once(m);
  const samples = new Map<Mode, Sample[]>(MODES.map((m) => [m, []]));
  // Interleave the modes so drift (GC, the other engineers' load) hits all alike.
  for (let r = 0; r < RUNS; r++) for (const m of MODES) samples.get(m)!.push(await once(m));

  const off = median(samples.get('off')!.map((s) => s.eventsPerCpuSec));
  const noop = median(samples.get('noop observer')!.map((s) => s.eventsPerCpuSec));
  const rows = MODES.map((m) => {
    const s = samples.get(m)!;
    const eps = median(s.map((x) => x.eventsPerCpuSec));
    return {
      mode: m,
      eventsPerCpuSec: Math.round(eps),
      wallEventsPerSec: Math.round(median(s.map((x) => x.eventsPerSec))),
      ratio: Number((eps / off).toFixed(3)),
      vsNoop: Number((eps / noop).toFixed(3)),
      framesToViewer: median(s.map((x) => x.framesToViewer)),
      kbToViewer: Math.round(median(s.map((x) => x.bytesToViewer)) / 1024),
    };
  });
  const md = [
    `# Inspector cost (${ACTORS} supervised machines, ${EVENTS} events, medians of ${RUNS})`,
    '',
    'Ratios are of events per CPU-second of this process (the machine is shared; wall',
    'time is shown too). The viewer runs in the same process, so its cost is counted.',
    "`no viewer`, `one viewer` and `stalled viewer` use the inspector's gate (what `roundtable start`",
    'passes): XState inspects an actor only while a viewer is connected. `observer always on` is',
    "the inspector's observer given to every actor (the shape before the gate).",
    `Load average (1 min) ${loadavg()[0]?.toFixed(2)} at the end, on ${cpus().length} cores shared with other work.`,
    '',
    '| mode | events/CPU-s | vs off | vs noop observer | wall events/s | frames to viewer | KiB to viewer |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.mode} | ${r.eventsPerCpuSec} | ${r.ratio} | ${r.vsNoop} | ${r.wallEventsPerSec} | ${r.framesToViewer} | ${r.kbToViewer} |`,
    ),
  ].join('\n');
  writeResults('inspector', { actors: ACTORS, events: EVENTS, runs: RUNS, rows }, md);
  process.stdout.write(`${md}\n`);
}
