/**
 * One roundtable node as a real process, for the multi-node dispatch tests:
 * `createRuntime` on a Postgres server (the URL given), the simulated
 * backend on real time, NOTIFY through the store handle. It submits its
 * share of jobs (round-robin over its users, `sleep` commands of a few ms),
 * waits until every task it submitted has finished, prints one JSON line
 * per milestone on stdout, and exits 0. Run with
 * `node --import tsx test/support/dispatchNode.ts '<json config>'`.
 */
import { createRuntime } from '../../src/actors/runtime.js';
import { SimulatedBackend } from '../../src/containers/simulated/SimulatedBackend.js';
import { SimulatedCluster } from '../../src/containers/simulated/SimulatedCluster.js';
import { connect } from '../../src/db/index.js';
import { systemClock } from '../../src/supervisor/clock.js';

export interface DispatchNodeConfig {
  url: string;
  nodeId: string;
  users: string[];
  jobs: number;
  /** Jobs over every node: a node stops only when all are done (it may be running others'). */
  totalJobs: number;
  caps: { maxRunning: number; defaultUserCap: number };
  localMax?: number;
  /** A job's run time, in seconds (the simulated `sleep`). */
  jobSeconds: number;
  /** Submits this many at a time. */
  lanes: number;
  /** Deadline for the whole run. */
  deadlineMs: number;
}

const say = (record: Record<string, unknown>) =>
  process.stdout.write(`${JSON.stringify(record)}\n`);

async function main(): Promise<void> {
  const c = JSON.parse(process.argv[2] ?? '{}') as DispatchNodeConfig;
  const deadline = setTimeout(() => {
    say({ fatal: 'deadline' });
    process.exit(3);
  }, c.deadlineMs);
  const store = await connect({ databaseUrl: c.url, poolMax: 4 });
  const cluster = new SimulatedCluster({ clock: systemClock, nodes: ['sim-1'] });
  let errors = 0;
  const runtime = await createRuntime({
    db: store.db,
    notifications: store,
    backend: new SimulatedBackend(cluster),
    clock: systemClock,
    caps: c.caps,
    ...(c.localMax === undefined ? {} : { localMax: c.localMax }),
    nodeId: c.nodeId,
    dispatchPollMs: 200,
    onError: (e) => {
      errors += 1;
      if (errors <= 5) process.stderr.write(`${c.nodeId} runtime error: ${String(e)}\n`);
    },
  });
  say({ ready: runtime.owner });
  const mine = new Set<string>();
  let next = 0;
  const lane = async () => {
    while (next < c.jobs) {
      const i = next++;
      const userId = c.users[i % c.users.length] ?? 'u';
      const created = await runtime.submit(userId, {
        title: `${c.nodeId}-${i}`,
        image: 'sim',
        command: ['sleep', String(c.jobSeconds)],
      });
      mine.add(created.task.id);
    }
  };
  await Promise.all(Array.from({ length: c.lanes }, lane));
  say({ submitted: mine.size });
  // Done when every node's tasks are done: this node may be running others'.
  for (;;) {
    const r = await store.db
      .selectFrom('tasks')
      .select((eb) => [
        eb.fn.countAll<string>().as('all'),
        eb.fn.count<string>('id').filterWhere('board_column', '=', 'done').as('done'),
      ])
      .executeTakeFirstOrThrow();
    if (Number(r.all) >= c.totalJobs && Number(r.done) === Number(r.all)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  say({ done: mine.size, errors });
  await runtime.stop();
  await store.close();
  clearTimeout(deadline);
}

main().catch((error: unknown) => {
  say({ fatal: String(error) });
  process.exit(2);
});
