/**
 * Two `roundtable start` processes on one database of the Postgres server,
 * as replicas behind a load balancer: a client sends one submission with an
 * `Idempotency-Key` through both at once (its first try timed out, say, and
 * the retry went to the other node), then again later. One task, one run:
 * the command counts its own starts.
 *
 * Skipped without ROUNDTABLE_TEST_DATABASE_URL, failed with CI=true. Real
 * processes, so real time: every wait is bounded.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { until } from '../containers/local/localFixture.js';
import {
  countsItsStarts,
  describeWithServer,
  type E2eNode,
  serverSkipNote,
  twoLocalNodes,
  USERS,
} from './e2eCluster.js';

const nodes = twoLocalNodes('rt_submit_key', ['key-a', 'key-b']);

/** POST /api/tasks to `node` as ann with `key`: its status and body. */
async function submit(node: E2eNode, key: string, command: string[]) {
  const res = await fetch(`${node.baseUrl}/api/tasks`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${USERS.ann}`,
      'content-type': 'application/json',
      'idempotency-key': key,
    },
    body: JSON.stringify({ title: 'once', image: 'alpine:3.20', command }),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: res.status, body: (await res.json()) as { taskId: string; replayed: boolean } };
}

describeWithServer(`one submission key through two node processes${serverSkipNote}`, () => {
  it('makes one task and one run, whichever node each try reaches', async () => {
    const { cluster, a, b } = nodes;
    await Promise.all([cluster.startReady(a), cluster.startReady(b)]);
    const gate = join(cluster.dir, 'go');
    const starts = join(cluster.dir, 'starts');
    const command = countsItsStarts(starts, gate);
    const tries = await Promise.all([
      submit(a, 'order-7', command),
      submit(b, 'order-7', command),
      submit(b, 'order-7', command),
    ]);
    expect(tries.map((t) => t.status).sort()).toEqual([200, 200, 201]);
    expect(new Set(tries.map((t) => t.body.taskId)).size).toBe(1);
    const taskId = tries[0]!.body.taskId;

    await until(() => (existsSync(starts) ? true : undefined), 30_000);
    writeFileSync(gate, '');
    await until(async () => {
      const rows = await cluster.query<{ status: string }>(
        'SELECT status FROM sessions WHERE task_id = $1',
        [taskId],
      );
      return rows[0]?.status === 'succeeded' ? rows : undefined;
    }, 60_000);

    // Later, through either node: the same finished task, nothing new.
    const later = await submit(a, 'order-7', command);
    expect(later).toMatchObject({ status: 200, body: { taskId, replayed: true } });
    const changed = await submit(b, 'order-7', ['true']);
    expect(changed.status).toBe(409);
    expect(readFileSync(starts, 'utf8')).toBe('start\n');
    const tasks = await cluster.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM tasks WHERE user_id = 'ann'",
    );
    expect(tasks[0]?.n).toBe(1);
  }, 180_000);
});
