/**
 * Stopping a local run: its wrapper is the leader of its own session and
 * process group (`setsid` at spawn), so one signal to the group reaches the
 * command and everything it started. SIGTERM first, so the command can clean
 * up; SIGKILL for whatever is still there after the grace.
 */

import { errorCode } from '../../common/errorCode.js';
import type { Clock } from '../Clock.js';

/** Default grace between SIGTERM and SIGKILL (Docker's own stop default). */
export const STOP_GRACE_MS = 10_000;
/** How often a stop looks whether the group is gone. */
const STOP_POLL_MS = 50;
/** After SIGKILL the kernel ends the group at once; this only bounds the wait for it to be reaped. */
const KILL_SETTLE_MS = 2_000;

/** Sends `signal` to every process of group `pgid`; false when the group is gone. */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    const code = errorCode(error);
    // EPERM: a member we may not signal (it changed user); it exists all the same.
    if (code === 'EPERM') return true;
    if (code === 'ESRCH') return false;
    throw error;
  }
}

export type StopOutcome = 'gone' | 'terminated' | 'killed';

/**
 * SIGTERM to the group, SIGKILL after `graceMs` if any member is left.
 * A zombie member still counts until it is reaped, which its parent (this
 * process, or init after a restart) does at once.
 */
export async function stopGroup(
  pgid: number,
  options: { clock: Clock; graceMs: number },
): Promise<StopOutcome> {
  if (!signalGroup(pgid, 'SIGTERM')) return 'gone';
  if (await goneWithin(pgid, options.clock, options.graceMs)) return 'terminated';
  signalGroup(pgid, 'SIGKILL');
  await goneWithin(pgid, options.clock, KILL_SETTLE_MS);
  return 'killed';
}

async function goneWithin(pgid: number, clock: Clock, ms: number): Promise<boolean> {
  const until = clock.now() + ms;
  for (;;) {
    if (!signalGroup(pgid, 0)) return true;
    if (clock.now() >= until) return false;
    await new Promise<void>((resolve) => clock.setTimeout(resolve, STOP_POLL_MS));
  }
}
