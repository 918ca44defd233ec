/**
 * How a Docker backend's `start` waits for a new handle's container: poll
 * until it runs, but stop at once when the engine says it will not run it.
 * Without that, an image Swarm cannot get looked like a slow start for the
 * whole start timeout, and Swarm's own reason ("No such image") was lost.
 */
import type { Clock } from '../Clock.js';
import { ContainerError, cutReason } from '../ContainerError.js';

/** A session's container as the backend found it; null while none is running. */
export interface CurrentContainer {
  id: string;
  startedAt: Date | null;
}

/**
 * Why a new run has no running container yet, in the engine's words.
 * `refused` ends the wait at once (`rejected`): the engine will not run this
 * spec. Otherwise the reason is only kept for the start timeout's message.
 */
export interface StartHold {
  refused: boolean;
  reason: string;
}

export interface StartWaitOptions {
  clock: Clock;
  handle: string;
  timeoutMs: number;
  pollMs: number;
  /** The running container, or null while there is none. */
  current: () => Promise<CurrentContainer | null>;
  /** What keeps it from running, when the engine says; null when it does not. */
  hold: () => Promise<StartHold | null>;
}

/**
 * Resolves with the running container; rejects `rejected` with the engine's
 * reason as soon as it refuses the run, or `timeout` (naming the last reason
 * the engine gave) after `timeoutMs` on the injected clock.
 */
export async function waitForRunning(options: StartWaitOptions): Promise<CurrentContainer> {
  const { clock, handle, timeoutMs, pollMs } = options;
  const until = clock.now() + timeoutMs;
  for (;;) {
    const current = await options.current();
    if (current) return current;
    const hold = await options.hold();
    if (hold?.refused) throw new ContainerError('rejected', cutReason(hold.reason));
    if (clock.now() >= until) {
      const why = hold ? ` (${cutReason(hold.reason)})` : '';
      throw new ContainerError(
        'timeout',
        `${handle} had no running container after ${timeoutMs} ms${why}`,
      );
    }
    await new Promise<void>((resolve) => clock.setTimeout(resolve, pollMs));
  }
}
