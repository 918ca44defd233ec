/**
 * The handle of a local run names the process it started, not only the
 * session: `rt-<sessionId>:<pid>.<start>.<boot>`, where `start` is the
 * process's start time as the kernel reports it and `boot` names the boot it
 * started in. A pid the kernel gave to another process since (after the run
 * ended, or across a reboot) then shows a different start or boot: the run
 * was replaced, and nothing addressed by this handle may signal that process.
 *
 * Pure.
 */
import { ContainerError } from '../ContainerError.js';
import { handleFor } from '../wrapper.js';

export interface LocalHandle {
  sessionId: string;
  pid: number;
  /** Kernel start time (Linux: clock ticks since boot; macOS: epoch seconds). */
  startToken: string;
  /** Which boot (Linux: boot_id's first 8 hex digits; macOS: boot time in epoch seconds). */
  bootToken: string;
}

const LOCAL_HANDLE = /^rt-([A-Za-z0-9_-]{1,60}):(\d{1,10})\.(\d{1,20})\.([0-9a-f]{1,32})$/;

/**
 * @example
 * ```ts
 * formatLocalHandle({ sessionId: 's1', pid: 4242, startToken: '45565', bootToken: '2d47ad76' }) // => 'rt-s1:4242.45565.2d47ad76'
 * formatLocalHandle({ sessionId: 'a;b', pid: 1, startToken: '1', bootToken: '1' }) // throws invalid_argument
 * ```
 */
export function formatLocalHandle(h: LocalHandle): string {
  const handle = `${handleFor(h.sessionId)}:${h.pid}.${h.startToken}.${h.bootToken}`;
  if (parseLocalHandle(handle) === null) {
    throw new ContainerError('invalid_argument', `not a local handle: ${handle}`);
  }
  return handle;
}

/**
 * Null for anything that is not a local handle (another backend's `rt-<id>`,
 * garbage from a row): such a handle names no process of ours.
 *
 * @example
 * ```ts
 * parseLocalHandle('rt-s1:4242.45565.2d47ad76') // => { sessionId: 's1', pid: 4242, startToken: '45565', bootToken: '2d47ad76' }
 * parseLocalHandle('rt-s1') // => null
 * parseLocalHandle('rt-s1:0.1.ab') // => null
 * parseLocalHandle('rt-s1:12.x.ab') // => null
 * ```
 */
export function parseLocalHandle(handle: string): LocalHandle | null {
  const m = LOCAL_HANDLE.exec(handle);
  if (!m) return null;
  const pid = Number(m[2]);
  if (!Number.isSafeInteger(pid) || pid < 1) return null;
  return { sessionId: m[1]!, pid, startToken: m[3]!, bootToken: m[4]! };
}
