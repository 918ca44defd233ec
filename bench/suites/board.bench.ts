/**
 * Board fan-out: 1,000 subscribed WebSocket clients of one user; each change
 * (an output line on a running card) is timed from the source emitting it to
 * the last client receiving its update. Changes go one at a time, so this is
 * latency, not throughput. Clients and server share one process (and its two
 * cores), so the numbers include the clients' own receive work.
 */
import { performance } from 'node:perf_hooks';
import { WebSocket } from 'ws';
import { FakeBoard } from '../../test/support/fakeBoard.js';
import { ALICE, startHarness } from '../../test/ui-server/wsHarness.js';
import { median, percentile, writeResults } from '../stats.js';

const CLIENTS = 1000;
const CHANGES = 300;
const WARMUP = 20;
const DEADLINE_MS = 10_000;

export async function run(): Promise<void> {
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
  writeResults('board', result, md);
  process.stdout.write(`${md}\n`);
}
