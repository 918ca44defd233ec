/**
 * The ops the benches send a tick for a no-op job (src/db/tickTypes.ts):
 * its finish, and its handle with it when the run is short enough for both
 * to ride one tick, as the runtime sends them.
 */
import type { TickFinish, TickOp } from '../src/db/tickTypes.js';

/** The finish of a no-op run that exited 0, with no output stored. */
export function noopFinish(s: { id: string; epoch: number }, ref: string): TickFinish {
  return {
    op: 'finish',
    ref,
    sessionId: s.id,
    epoch: s.epoch,
    status: 'succeeded',
    exitCode: 0,
    reason: null,
    userRecoverable: false,
    output: null,
    column: 'done',
    requeue: null,
  };
}

/** A short run's last ops, as the runtime sends them in one tick: its handle, then its finish (empty output). */
export function shortRunOps(s: { id: string; epoch: number }, n: number): TickOp[] {
  return [
    {
      op: 'handle',
      ref: `h${n}`,
      sessionId: s.id,
      epoch: s.epoch,
      backend: 'simulated',
      handle: `rt-${s.id}`,
      startedAt: new Date(),
    },
    { ...noopFinish(s, `f${n}`), output: { text: '', totalBytes: 0, truncated: false } },
  ];
}
