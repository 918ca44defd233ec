/**
 * What the kernel says about a pid: whether it is alive and when it started.
 * The start time is what tells our run from another process that got the
 * same pid later, so it is read the way the kernel keeps it, exactly:
 *
 * - Linux: `/proc/<pid>/stat` field 22 (`starttime`, clock ticks since boot),
 *   with the boot named by `/proc/sys/kernel/random/boot_id`; the wall-clock
 *   start is `btime` (`/proc/stat`) + ticks / `USER_HZ` (100 on every Linux
 *   ABI Node runs on), good to about a second, and only used for display
 *   and for "started after", never for identity.
 * - macOS: `ps -o stat=,lstart= -p <pid>` (the kernel's `p_starttime`, shown
 *   to the second) and `sysctl -n kern.boottime`. A pid reused within the same
 *   second as the run started is not told apart there.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { ContainerError } from '../ContainerError.js';

export interface ProcessIdentity {
  startToken: string;
  /** Wall-clock start, when known. */
  startedAt: Date | null;
  /** A zombie has exited; it only waits for its parent to reap it. */
  zombie: boolean;
}

export interface ProcessTable {
  /** The boot this process runs in (see `LocalHandle.bootToken`). */
  readonly bootToken: string;
  /** Null when no process has this pid. Synchronous: called right after spawn, before a reap. */
  identityOf(pid: number): ProcessIdentity | null;
}

/** Linux's USER_HZ: `/proc` reports times in it whatever the kernel's own HZ. */
const USER_HZ = 100;

/**
 * The state and start ticks of a `/proc/<pid>/stat` line. The command name
 * (field 2) is in parentheses and may itself hold spaces and parentheses, so
 * fields are counted from the last `)`.
 *
 * @example
 * ```ts
 * parseProcStat('12273 (head) R 12266 12266 8637 0 -1 4194304 99 0 0 0 0 0 0 0 20 0 1 0 45565 2998272 396') // => { state: 'R', startTicks: '45565' }
 * parseProcStat('7 (a) b) (c) Z 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0') // => { state: 'Z', startTicks: '99' }
 * parseProcStat('garbage') // => null
 * ```
 */
export function parseProcStat(line: string): { state: string; startTicks: string } | null {
  const close = line.lastIndexOf(')');
  if (close < 0) return null;
  const fields = line
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  // fields[0] is field 3 (state), so field 22 is fields[19].
  const state = fields[0];
  const startTicks = fields[19];
  if (state === undefined || startTicks === undefined || !/^\d+$/.test(startTicks)) return null;
  return { state, startTicks };
}

function readOrNull(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

export function linuxProcessTable(): ProcessTable {
  const bootId = readOrNull('/proc/sys/kernel/random/boot_id');
  const btime = /^btime (\d+)$/m.exec(readOrNull('/proc/stat') ?? '')?.[1];
  if (bootId === null || btime === undefined) {
    throw new ContainerError('unavailable', 'the local backend needs /proc (Linux) to track runs');
  }
  const bootSeconds = Number(btime);
  return {
    bootToken: bootId.replace(/[^0-9a-f]/g, '').slice(0, 8),
    identityOf(pid) {
      const text = readOrNull(`/proc/${pid}/stat`);
      const parsed = text === null ? null : parseProcStat(text);
      if (parsed === null) return null;
      return {
        startToken: parsed.startTicks,
        startedAt: new Date(bootSeconds * 1000 + (Number(parsed.startTicks) * 1000) / USER_HZ),
        zombie: parsed.state === 'Z' || parsed.state === 'X',
      };
    },
  };
}

export function darwinProcessTable(): ProcessTable {
  const boot = /sec = (\d+)/.exec(
    execFileSync('sysctl', ['-n', 'kern.boottime'], { encoding: 'utf8' }),
  )?.[1];
  if (boot === undefined) {
    throw new ContainerError('unavailable', 'sysctl kern.boottime gave no boot time');
  }
  return {
    bootToken: Number(boot).toString(16),
    identityOf(pid) {
      let out: string;
      try {
        out = execFileSync('ps', ['-o', 'stat=,lstart=', '-p', String(pid)], { encoding: 'utf8' });
      } catch {
        return null; // ps exits 1 when there is no such process
      }
      // Both groups are not optional: a match sets them (the `!`s below).
      const m = /^\s*(\S+)\s+(.+?)\s*$/.exec(out);
      const ms = m ? Date.parse(m[2]!) : Number.NaN;
      if (!m || !Number.isFinite(ms)) return null;
      return {
        startToken: String(Math.floor(ms / 1000)),
        startedAt: new Date(ms),
        zombie: m[1]!.startsWith('Z'),
      };
    },
  };
}

/** The table for this OS; `unavailable` where the backend cannot tell processes apart. */
export function hostProcessTable(platform: NodeJS.Platform = process.platform): ProcessTable {
  if (platform === 'linux') return linuxProcessTable();
  if (platform === 'darwin') return darwinProcessTable();
  throw new ContainerError(
    'unavailable',
    `the local backend supports Linux and macOS, not ${platform}`,
  );
}
