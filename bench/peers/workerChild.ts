/**
 * Entry of a worker child process: `workerChild.ts <system> <url> <mode json> [nodeId]`.
 * With a nodeId it is one extra roundtable node of a multi-node worker
 * (forked by node A, see systems/roundtableRuntime.ts): it runs that node
 * only and reports to node A's process.
 * Runs one system's worker and reports each job start to the parent over IPC,
 * batched every 10 ms (the timestamps are taken in the handler, so batching
 * does not move them). Running workers in a child is what lets the recovery
 * test SIGKILL one, and keeps the enqueueing side's CPU out of the worker.
 * For a system that enqueues through its worker (roundtable's runtime), the
 * parent's `enqueue` messages are run here. Every statement the worker sends
 * through `pg` is counted (queryProfile.ts) and handed back on stop.
 */

import { installQueryProfile, mergeProfiles, queryProfile } from './queryProfile.js';
import { systemByName } from './systems/index.js';
import type { WorkerMode } from './types.js';
import type { ChildMessage, ParentMessage } from './workerProtocol.js';

installQueryProfile();
const [name, url, modeJson, nodeId] = process.argv.slice(2);
if (
  name === undefined ||
  url === undefined ||
  modeJson === undefined ||
  process.send === undefined
) {
  throw new Error('usage: forked as workerChild.ts <system> <url> <mode json>');
}
const send = (m: ChildMessage): void => {
  process.send?.(m);
};
const mode = JSON.parse(modeJson) as WorkerMode & { recovery: boolean };
const system = systemByName(name);
if ('unavailable' in system) throw new Error(`${name}: ${system.unavailable}`);

let keys: string[] = [];
let at: number[] = [];
const flush = (): void => {
  if (keys.length === 0) return;
  send({ type: 'started', keys, at });
  keys = [];
  at = [];
};
const flusher = setInterval(flush, 10);

const onStart = (key: string): void => {
  keys.push(key);
  at.push(performance.timeOrigin + performance.now());
};
const worker =
  nodeId === undefined
    ? await system.startWorker(url, mode, onStart)
    : await (await import('./systems/roundtableRuntime.js')).startNode(
        name,
        url,
        mode,
        nodeId,
        onStart,
      );
send({ type: 'ready', ids: worker.ids, node: process.version, pid: process.pid });

process.on('message', (m: ParentMessage) => {
  if (m.type === 'cpu') {
    const own = process.cpuUsage();
    void (worker.childCpu?.() ?? Promise.resolve({ user: 0, system: 0 })).then((c) =>
      send({
        type: 'cpu',
        id: m.id,
        usage: { user: own.user + c.user, system: own.system + c.system },
      }),
    );
    return;
  }
  if (m.type === 'enqueue') {
    const enqueue = worker.enqueue;
    const done =
      enqueue === undefined
        ? Promise.reject(new Error(`${name} does not enqueue in its worker`))
        : enqueue.call(worker, m.keys);
    void done.then(
      () => send({ type: 'enqueued', id: m.id }),
      (e: unknown) =>
        send({ type: 'enqueued', id: m.id, error: e instanceof Error ? e.stack : String(e) }),
    );
    return;
  }
  void worker.stop().then(
    () => {
      flush();
      clearInterval(flusher);
      // Exit explicitly: a library may leave a timer behind, and the parent
      // only waits a bounded time before it SIGKILLs.
      const profile = mergeProfiles([queryProfile(), ...(worker.childProfiles?.() ?? [])]);
      process.send?.({ type: 'stopped', profile } satisfies ChildMessage, () => process.exit(0));
    },
    (e: unknown) => {
      process.stderr.write(`worker stop failed: ${String(e)}\n`);
      process.exit(1);
    },
  );
});
