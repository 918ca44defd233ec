/**
 * A child process of the recovery bench: one roundtable node as
 * `roundtable start` runs it on a server (createRuntime with the store
 * handle as boot lock, so it holds its boot lock and takes part in the
 * Reconciler's leadership), the simulated backend on real time, every
 * other option its default. Prints `ready <owner>` once it is up, then
 * stays until it is killed. `node --import tsx bench/peers/leaderNode.ts <url> <nodeId>`.
 */
import { createRuntime } from '../../src/actors/runtime.js';
import { SimulatedBackend } from '../../src/containers/simulated/SimulatedBackend.js';
import { SimulatedCluster } from '../../src/containers/simulated/SimulatedCluster.js';
import { connect } from '../../src/db/index.js';
import { systemClock } from '../../src/supervisor/clock.js';

const [url = '', nodeId = 'bench-leader'] = process.argv.slice(2);
const h = await connect({ databaseUrl: url });
const runtime = await createRuntime({
  db: h.db,
  bootLock: h,
  notifications: h,
  backend: new SimulatedBackend(new SimulatedCluster({ clock: systemClock, nodes: ['sim-1'] })),
  clock: systemClock,
  nodeId,
  onError: () => undefined,
});
process.stdout.write(`ready ${runtime.owner}\n`);
