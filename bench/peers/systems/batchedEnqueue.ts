/** The enqueue side of the rows with no runtime: `send` one batch of at most `size` keys at a time. */
import type { QueueClient } from '../types.js';

export function batchedEnqueue(
  size: number,
  send: (keys: readonly string[]) => Promise<void>,
): Pick<QueueClient, 'enqueueMany' | 'enqueueOne'> {
  return {
    async enqueueMany(keys) {
      for (let i = 0; i < keys.length; i += size) await send(keys.slice(i, i + size));
    },
    enqueueOne: (key) => send([key]),
  };
}
