/**
 * The dispatch stand-in of the rows with no runtime (tick alone, the
 * floor): one loop, one call in flight. Each call carries the runs the last
 * one granted (no-op jobs are done at once) and asks for the free slots; the
 * loop naps `idleMs` when it holds nothing and got nothing (the enqueuer is
 * another process, and these rows listen for nothing).
 */
import type { WorkerHandle, WorkerMode } from '../types.js';

export interface GrantLoopOptions<R> {
  owner: string;
  mode: WorkerMode;
  idleMs: number;
  /** Finishes `done` and grants up to `free`: each grant's key (the job's title) and its run. */
  call(done: readonly R[], free: number): Promise<readonly { key: string; run: R }[]>;
  onStart(key: string): void;
  close(): Promise<void>;
}

export function grantLoop<R>(o: GrantLoopOptions<R>): WorkerHandle {
  let stopping = false;
  let done: R[] = [];
  let held = 0;
  const loop = (async () => {
    while (!stopping) {
      const finishing = done;
      held -= finishing.length;
      done = [];
      const granted = await o.call(finishing, o.mode.concurrency - held);
      held += granted.length;
      for (const g of granted) {
        o.onStart(g.key);
        // A no-op job is done at once; a held one never is.
        if (o.mode.job === 'noop') done.push(g.run);
      }
      if (granted.length === 0 && done.length === 0)
        await new Promise((res) => setTimeout(res, o.idleMs));
    }
  })();
  return {
    ids: [o.owner],
    async stop() {
      stopping = true;
      await loop;
      if (done.length > 0) await o.call(done, 0);
      await o.close();
    },
  };
}
