/**
 * The handle of a local run names the process it started, not only the
 * session: `rt-<sessionId>:<pid>.<start>.<boot>`, where `start` is the
 * process's start time as the kernel reports it and `boot` names the boot it
 * started in. A pid the kernel gave to another process since (after the run
 * ended, or across a reboot) then shows a different start or boot: the run
 * was replaced, and nothing addressed by this handle may signal that process.
 *
 * A handle may end in `@<dir>`: the run directory's root (the owner's
 * `<dataDir>/runs/<namespace>`, base64url), so another node on the same
 * machine, with a data directory of its own, looks for the run's files where
 * they are, not under its own. A handle without it (written before) names
 * the observing node's own root, as it always did. With the boot token it
 * says where the run can be observed: on this machine, in that directory.
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
  /** Absolute root of the run directories the run's files are under; absent: the observer's own. */
  dir?: string;
}

const LOCAL_HANDLE =
  /^rt-([A-Za-z0-9_-]{1,60}):(\d{1,10})\.(\d{1,20})\.([0-9a-f]{1,32})(?:@([A-Za-z0-9_-]{1,400}))?$/;

/** What the session row's handle column holds at most (src/db/inputs.ts). */
export const LOCAL_HANDLE_MAX = 255;

/** The directory of a handle's `@` part, if it is an absolute path encoded the one way we encode it. */
function decodeDir(encoded: string): string | null {
  const dir = Buffer.from(encoded, 'base64url').toString('utf8');
  const canonical = Buffer.from(dir, 'utf8').toString('base64url') === encoded;
  return canonical && dir.startsWith('/') && !dir.includes('\0') ? dir : null;
}

/**
 * @example
 * ```ts
 * formatLocalHandle({ sessionId: 's1', pid: 4242, startToken: '45565', bootToken: '2d47ad76' }) // => 'rt-s1:4242.45565.2d47ad76'
 * formatLocalHandle({ sessionId: 's1', pid: 4242, startToken: '45565', bootToken: '2d47ad76', dir: '/d/runs/default' }) // => 'rt-s1:4242.45565.2d47ad76@L2QvcnVucy9kZWZhdWx0'
 * formatLocalHandle({ sessionId: 'a;b', pid: 1, startToken: '1', bootToken: '1' }) // throws invalid_argument
 * formatLocalHandle({ sessionId: 's1', pid: 1, startToken: '1', bootToken: '1', dir: `/${'d'.repeat(200)}` }) // throws invalid_argument
 * ```
 */
export function formatLocalHandle(h: LocalHandle): string {
  const at = h.dir === undefined ? '' : `@${Buffer.from(h.dir, 'utf8').toString('base64url')}`;
  const handle = `${handleFor(h.sessionId)}:${h.pid}.${h.startToken}.${h.bootToken}${at}`;
  if (parseLocalHandle(handle) === null) {
    throw new ContainerError('invalid_argument', `not a local handle: ${handle}`);
  }
  if (handle.length > LOCAL_HANDLE_MAX) {
    throw new ContainerError(
      'invalid_argument',
      `a local handle is at most ${LOCAL_HANDLE_MAX} characters; ${handle.length} with the run directory ${h.dir}: use a shorter data directory path`,
    );
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
 * parseLocalHandle('rt-s1:4242.45565.2d47ad76@L2QvcnVucy9kZWZhdWx0') // => { sessionId: 's1', pid: 4242, startToken: '45565', bootToken: '2d47ad76', dir: '/d/runs/default' }
 * parseLocalHandle('rt-s1:4242.45565.2d47ad76@cmVsYXRpdmU') // => null
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
  // Groups 1, 3 and 4 are not optional in LOCAL_HANDLE: a match sets them.
  const h: LocalHandle = { sessionId: m[1]!, pid, startToken: m[3]!, bootToken: m[4]! };
  if (m[5] === undefined) return h;
  const dir = decodeDir(m[5]);
  return dir === null ? null : { ...h, dir };
}
