/**
 * Two `roundtable start` processes on the local backend, one database of the
 * Postgres server, as replicas behind a load balancer: a client watching the
 * board of the node that does NOT run a task sees the running card's output
 * while the run goes (shared through `live_tails`), then the stored output
 * once it ended. Before, that card showed no line until the run ended.
 *
 * Skipped without ROUNDTABLE_TEST_DATABASE_URL, failed with CI=true. Real
 * processes, so real time: every wait is bounded.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  ADMIN,
  createTaskOver,
  describeWithServer,
  type E2eNode,
  serverSkipNote,
  transition,
  twoLocalNodes,
  until,
} from './e2eCluster.js';

const nodes = twoLocalNodes('rt_live_output', ['live-a', 'live-b']);

interface Card {
  taskId: string;
  column: string;
  lastOutput: string[];
}

/** The admin's board of `node` over a WebSocket: every card it was told of, latest first. */
function watchBoard(node: E2eNode): { latest(taskId: string): Card | undefined; close(): void } {
  const cards = new Map<string, Card>();
  const ws = new WebSocket(`${node.baseUrl.replace(/^http/, 'ws')}/ws`, [
    'roundtable.board.v1',
    `roundtable.bearer.${ADMIN}`,
  ]);
  ws.on('open', () => ws.send(JSON.stringify({ type: 'subscribe', v: 1 })));
  ws.on('message', (data) => {
    const frame = JSON.parse(String(data)) as { type: string; cards?: Card[] };
    if (frame.type === 'snapshot' || frame.type === 'update')
      for (const c of frame.cards ?? []) cards.set(c.taskId, c);
  });
  ws.on('error', () => undefined);
  return { latest: (taskId) => cards.get(taskId), close: () => ws.terminate() };
}

describeWithServer(`a running card's output on the other node's board${serverSkipNote}`, () => {
  it('shows the lines while the run goes, then the stored output', async () => {
    const { cluster, a, b } = nodes;
    const [pa, pb] = await Promise.all([cluster.startReady(a), cluster.startReady(b)]);
    const gate = join(cluster.dir, 'live-gate');
    const task = await createTaskOver(a, 'ann', {
      title: 'prints and waits',
      image: 'alpine:3.20',
      command: [
        'sh',
        '-c',
        'echo "line 1"; echo "line 2"; while [ ! -e "$1" ]; do sleep 0.05; done; echo "line 3"',
        'job',
        gate,
      ],
    });
    const owner = await until(
      'the run is granted',
      async () => {
        const rows = await cluster.query<{ owner_node: string | null; status: string }>(
          'SELECT owner_node, status FROM sessions WHERE id = $1',
          [task.sessionId],
        );
        return rows[0]?.status === 'running' ? rows[0].owner_node : undefined;
      },
      30_000,
    );
    const runsOnA = owner?.startsWith(`${a.name}@`) === true;
    const runner = runsOnA ? pa : pb;
    await runner.waitFor(transition('running', task.taskId), 30_000, 'the run started');
    // The node that does not run it, as a client behind a load balancer may reach.
    const board = watchBoard(runsOnA ? b : a);
    try {
      const live = await until(
        "the other node's card shows line 2",
        () => {
          const c = board.latest(task.taskId);
          return c?.column === 'running' && c.lastOutput.includes('line 2') ? c : undefined;
        },
        15_000,
      );
      expect(live.lastOutput).toEqual(['line 1', 'line 2']);
      writeFileSync(gate, '');
      const done = await until(
        "the other node's card is done",
        () => {
          const c = board.latest(task.taskId);
          return c?.column === 'done' ? c : undefined;
        },
        30_000,
      );
      expect(done.lastOutput).toEqual(['line 1', 'line 2', 'line 3']);
      await until(
        'the shared row is deleted',
        async () => {
          const rows = await cluster.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM live_tails WHERE session_id = $1',
            [task.sessionId],
          );
          return rows[0]?.n === 0 ? true : undefined;
        },
        10_000,
      );
    } finally {
      board.close();
    }
  }, 180_000);
});
