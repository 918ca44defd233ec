/**
 * The board: (1) fan-out: 1,000 subscribed WebSocket clients of one user;
 * each change (an output line on a running card) is timed from the source
 * emitting it to the last client receiving its update. Changes go one at a
 * time, so this is latency, not throughput. Clients and server share one
 * process (and its two cores), so the numbers include the clients' own
 * receive work. (2) windows: what one grant (every queued card's position
 * moved) costs the hub in CPU and bytes per socket, on a line of 100 and of
 * 100,000, with 1 and 100 sockets, for a source that offers its line and,
 * side by side, one that emits every renumbered card (the baseline). (3) first paint of the page in
 * chromium, a 1,000-card board and a 100,000-card line, median of 5.
 */
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import { WebSocket } from 'ws';
import { BoardHub } from '../../src/ui-server/boardHub.js';
import { UI_SERVER_DEFAULTS } from '../../src/ui-server/uiServerOptions.js';
import { launchChromium } from '../../test/support/chromium.js';
import { FakeBoard } from '../../test/support/fakeBoard.js';
import { FakeSocket } from '../../test/ui-server/fakeSocket.js';
import { measureFirstPaint } from '../../test/ui-server/page/firstPaint.js';
import { ALICE, ManualClock, spec, startHarness } from '../../test/ui-server/wsHarness.js';
import { median, percentile, writeResults } from '../stats.js';

const CLIENTS = 1000;
const CHANGES = 300;
const WARMUP = 20;
const DEADLINE_MS = 10_000;

export async function run(): Promise<void> {
  // Chromium first, before 1,000 sockets have churned this process.
  const paint = await firstPaint();
  const board = new FakeBoard({ maxRunning: 1 });
  // One user with 1,000 sockets, all subscribing at once, is past the per-user
  // caps (50 sockets, 10 subscribes at once) on purpose: this measures fan-out.
  const { server } = await startHarness(
    {
      maxConnectionsPerUser: CLIENTS,
      maxConnectionsPerAddress: CLIENTS,
      subscribeBurst: CLIENTS,
    },
    board,
  );
  await board.createTask('alice', { title: 'bench', image: 'alpine:3', command: ['true'] });

  let received = 0;
  let onAll: (() => void) | null = null;
  const sockets: WebSocket[] = [];
  const connectStart = performance.now();
  for (let batch = 0; batch < CLIENTS; batch += 100) {
    await Promise.all(
      Array.from({ length: 100 }, async () => {
        const ws = new WebSocket(server.wsUrl, { headers: { authorization: `Bearer ${ALICE}` } });
        sockets.push(ws);
        await new Promise<void>((resolve, reject) => {
          ws.once('error', reject);
          ws.on('message', (data) => {
            const text = String(data);
            if (text.startsWith('{"type":"hello"')) ws.send('{"type":"subscribe","v":1}');
            else if (text.startsWith('{"type":"snapshot"')) resolve();
            else if (text.startsWith('{"type":"update"')) {
              received += 1;
              if (received === CLIENTS) onAll?.();
            }
          });
        });
      }),
    );
  }
  const connectMs = performance.now() - connectStart;

  const samples: number[] = [];
  const sendSamples: number[] = [];
  for (let i = 0; i < WARMUP + CHANGES; i++) {
    received = 0;
    const done = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`change ${i}: not delivered`)), DEADLINE_MS);
      onAll = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    const t0 = performance.now();
    board.output('t1', `line ${i}`);
    // The fan-out runs at the end of this turn of the loop (one flush per
    // batch of changes): the server's share is timed to that microtask.
    await Promise.resolve();
    const sent = performance.now() - t0;
    await done;
    if (i >= WARMUP) {
      samples.push(performance.now() - t0);
      sendSamples.push(sent);
    }
  }

  for (const ws of sockets) ws.terminate();
  await server.close();

  const result = {
    clients: CLIENTS,
    changes: CHANGES,
    connectAndSubscribeMs: Math.round(connectMs),
    medianMs: median(samples),
    p99Ms: percentile(samples, 99),
    maxMs: Math.max(...samples),
    serverSendMedianMs: median(sendSamples),
  };
  const f = (n: number) => n.toFixed(2);
  const md = [
    '# Board fan-out',
    '',
    `${CLIENTS} subscribed ws clients of one user, ${CHANGES} changes one at a time, change → last client.`,
    '',
    '| median ms | p99 ms | max ms | server send loop, median ms | connect+subscribe 1,000 ms |',
    '|---|---|---|---|---|',
    `| ${f(result.medianMs)} | ${f(result.p99Ms)} | ${f(result.maxMs)} | ${f(result.serverSendMedianMs)} | ${result.connectAndSubscribeMs} |`,
  ].join('\n');
  const windows = await windowCost();
  const load = loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
  const full = [
    md,
    '',
    '## Windows: one grant on a long line',
    '',
    "The head of the line starts (a run finishes, the next card is granted), so every queued card's position moves. `per-card`: the source emits every renumbered card and the hub re-sorts and re-sends them (how it worked before the line; the baseline). `line`: the source offers its line (keys that a grant does not move); the hub orders by key and asks only the windows' cards their positions, sending the moved ones as `positions`. CPU time (`process.cpuUsage`, µs, median of 5 grants): the hub's flush alone, and the whole grant (the source's work and the hub taking the cards included); bytes sent per socket for the grant. Each socket shows the default window (100 cards per column).",
    '',
    '| queued cards | source | sockets | flush CPU µs | grant CPU µs | per socket µs (flush) | bytes per socket |',
    '|---|---|---|---|---|---|---|',
    ...windows.map(
      (w) =>
        `| ${w.line.toLocaleString('en')} | ${w.mode} | ${w.sockets} | ${w.flushCpuUs} | ${w.grantCpuUs} | ${Math.round(w.flushCpuUs / w.sockets)} | ${w.bytesPerSocket} |`,
    ),
    '',
    `Load average at the end: ${load} on ${cpus().length} cores.`,
    '',
    '## First paint in chromium',
    '',
    `Navigation start to the frame that first draws cards (test/ui-server/page/firstPaint.ts), median of 5, at load ${load} on ${cpus().length} cores. The page draws one page per column (102 cards) whatever the line.`,
    '',
    '| board | cards painted, median ms | runs ms | first contentful paint ms |',
    '|---|---|---|---|',
    ...paint.map(
      (p) =>
        `| ${p.cards.toLocaleString('en')} cards | ${p.medianMs} | ${p.runsMs.join(', ')} | ${p.fcpMs} |`,
    ),
  ].join('\n');
  writeResults('board', { ...result, windows, paint, load }, full);
  process.stdout.write(`${full}\n`);
}

/**
 * One grant on a line of `line` queued cards: the head starts (a running
 * card finishes, the next is granted). `line`: the source offers its line
 * (keys; the hub asks the windows' cards their positions), or `per-card`: the
 * source emits every renumbered card, as before the line (the baseline).
 * Flush CPU is the hub's flush alone (the earlier results' figure); grant CPU
 * is the whole grant, the source's work and the hub taking the cards
 * included. CPU time, not wall: other processes load the machine.
 */
async function windowCost() {
  const out: Array<{
    mode: 'per-card' | 'line';
    line: number;
    sockets: number;
    flushCpuUs: number;
    grantCpuUs: number;
    bytesPerSocket: number;
  }> = [];
  for (const line of [100, 100_000]) {
    for (const mode of ['per-card', 'line'] as const) {
      for (const sockets of [1, 100]) {
        const clock = new ManualClock();
        const board = new FakeBoard({ maxRunning: 1, now: clock.now, lineKeys: mode === 'line' });
        board.createMany(
          'alice',
          Array.from({ length: line + 6 }, (_, i) => spec(`job ${i}`)),
        );
        const hub = new BoardHub({
          source: board,
          userIds: ['alice'],
          epoch: 'bench',
          limits: { ...UI_SERVER_DEFAULTS, subscribeBurst: 1000, floodBurst: 1000 },
          clock,
          logger: pino({ level: 'silent' }),
        });
        const fakes = Array.from({ length: sockets }, () => {
          const f = new FakeSocket();
          hub.attach(f.ws, { kind: 'user', userId: 'alice' });
          f.receive({ type: 'subscribe', v: 1 });
          return f;
        });
        const flushCpu: number[] = [];
        const grantCpu: number[] = [];
        let bytes = 0;
        for (let g = 0; g < 5; g++) {
          const running = board.cards('alice').find((c) => c.running)!;
          const sentBefore = fakes[0]!.sent.length;
          const t0 = process.cpuUsage();
          board.finish(running.taskId, 0);
          const t1 = process.cpuUsage();
          await Promise.resolve();
          const flush = process.cpuUsage(t1);
          const grant = process.cpuUsage(t0);
          flushCpu.push(flush.user + flush.system);
          grantCpu.push(grant.user + grant.system);
          bytes = fakes[0]!.sent.slice(sentBefore).reduce((n, f) => n + Buffer.byteLength(f), 0);
        }
        hub.close();
        out.push({
          mode,
          line,
          sockets,
          flushCpuUs: median(flushCpu),
          grantCpuUs: median(grantCpu),
          bytesPerSocket: bytes,
        });
      }
    }
  }
  return out;
}

async function firstPaint() {
  const browser = await launchChromium();
  const out: Array<{ cards: number; medianMs: number; runsMs: number[]; fcpMs: number | null }> =
    [];
  try {
    for (const cards of [1_000, 100_000]) {
      const board = new FakeBoard({ maxRunning: 2 });
      board.createMany(
        'alice',
        Array.from({ length: cards }, (_, i) => spec(`queued job ${i + 1}`)),
      );
      const h = await startHarness({}, board, { realClock: true });
      const runs: number[] = [];
      let fcp: number | null = null;
      for (let i = 0; i < 5; i++) {
        const ctx = await browser.newContext({ viewport: { width: 1400, height: 900 } });
        const p = await measureFirstPaint(
          await ctx.newPage(),
          `${h.server.url}/#token=${ALICE}`,
          30_000,
        );
        runs.push(p.cardsPaintedMs);
        fcp = p.firstContentfulPaintMs;
        await ctx.close();
      }
      await h.server.close();
      out.push({ cards, medianMs: median(runs), runsMs: runs, fcpMs: fcp });
    }
  } finally {
    await browser.close();
  }
  return out;
}
