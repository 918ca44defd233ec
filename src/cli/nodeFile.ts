/**
 * `<dataDir>/node.json`: which process runs a node on this data directory and
 * where its board listens. It keeps a second process from opening the same
 * PGlite directory (PGlite has one backend: two writers corrupt it), and lets
 * `enqueue` and `status` talk to a running node instead of its files.
 */
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { errorCode } from '../common/errorCode.js';
import { CliError } from './exitCodes.js';

export const NODE_FILE = 'node.json';

const shape = z.object({
  pid: z.number().int().positive(),
  url: z.string().nullable(),
  startedAt: z.string(),
  engine: z.enum(['pglite', 'postgres']),
});
export type NodeInfo = z.infer<typeof shape>;

/** Whether a process with this id exists (signal 0 checks without sending). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return errorCode(error) === 'EPERM';
  }
}

/** The live node on `dataDir`, if any; a file left by a dead process counts as none. */
export function readLiveNode(dataDir: string, alive = processAlive): NodeInfo | null {
  let text: string;
  try {
    text = readFileSync(join(dataDir, NODE_FILE), 'utf8');
  } catch {
    return null;
  }
  const parsed = shape.safeParse(safeJson(text));
  if (!parsed.success || !alive(parsed.data.pid)) return null;
  return parsed.data;
}

/**
 * A data directory this process cannot use: a file in its place, a parent
 * that is not a directory, no permission, a read-only file system. Exit 2
 * with the system's reason, never a stack trace (exit 1) or exit 4, which
 * says another node holds it.
 *
 * @example
 * ```ts
 * const e = unusableDataDir('/srv/rt', 'cannot create it', Object.assign(new Error('x'), { code: 'ENOTDIR' }));
 * e.code // => 'CLI_CONFIG'
 * e.message // => '--data-dir /srv/rt: cannot create it (ENOTDIR: not a directory)'
 * ```
 */
export function unusableDataDir(dataDir: string, what: string, error: unknown): CliError {
  const code = errorCode(error);
  const reason = code ? `${code}${REASONS[code] ? `: ${REASONS[code]}` : ''}` : String(error);
  return new CliError('CLI_CONFIG', `--data-dir ${dataDir}: ${what} (${reason})`, {
    cause: error,
  });
}

const REASONS: Record<string, string> = {
  ENOTDIR: 'not a directory',
  EEXIST: 'a file is in the way',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on the device',
  ENOENT: 'no such file or directory',
};

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** This process's claim on a data directory. */
export interface NodeClaim {
  /** Records the board's URL once it listens. */
  setUrl(url: string): void;
  /** Removes the file if it is still ours. Idempotent. */
  release(): void;
}

/** The node files this process holds now (an in-process test may start two nodes). */
const heldHere = new Set<string>();

/**
 * Whether a node file naming `pid` was left by an earlier process that had
 * this very pid: it names this process, which does not hold it. In a
 * container the node is pid 1 (or another pid the same at every start), so
 * after a SIGKILL, an OOM kill or a lost host, the file left on the volume
 * names the pid the next start gets: taken for a live node, it refused every
 * start with exit 4, for ever.
 *
 * @example
 * ```ts
 * leftByAnEarlierLife(process.pid, '/nowhere/node.json') // => true
 * leftByAnEarlierLife(process.pid + 1, '/nowhere/node.json') // => false
 * ```
 */
export function leftByAnEarlierLife(pid: number, path: string): boolean {
  return pid === process.pid && !heldHere.has(path);
}

/**
 * Claims `dataDir` for this process. Throws `CLI_IN_USE` when a live process
 * holds it; a stale file (its process is gone) is replaced.
 */
export function claimNodeFile(dataDir: string, engine: NodeInfo['engine']): NodeClaim {
  try {
    mkdirSync(dataDir, { recursive: true });
  } catch (error) {
    throw unusableDataDir(dataDir, 'cannot create it', error);
  }
  const path = join(dataDir, NODE_FILE);
  const info: NodeInfo = {
    pid: process.pid,
    url: null,
    startedAt: new Date().toISOString(),
    engine,
  };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      // 'wx': create only if absent, so two starts racing cannot both win.
      const fd = openSync(path, 'wx', 0o600);
      writeFileSync(fd, JSON.stringify(info));
      closeSync(fd);
      break;
    } catch (error) {
      if (errorCode(error) !== 'EEXIST') {
        // Not another node's claim: a directory this process cannot write (EACCES,
        // EROFS, ENOSPC) is a configuration fault, not exit 4 ("held by another node").
        throw unusableDataDir(dataDir, `cannot write ${path}`, error);
      }
      if (attempt > 0) {
        throw new CliError('CLI_IN_USE', `cannot claim ${path}`, { cause: error });
      }
      const live = readLiveNode(dataDir);
      if (live !== null && !leftByAnEarlierLife(live.pid, path)) {
        throw new CliError(
          'CLI_IN_USE',
          `${dataDir} is in use by process ${live.pid}${live.url ? ` (board at ${live.url})` : ''}; stop it first, or use another --data-dir`,
        );
      }
      unlinkSync(path);
    }
  }
  let released = false;
  heldHere.add(path);
  return {
    setUrl(url) {
      if (released) return;
      info.url = url;
      writeFileSync(path, JSON.stringify(info));
    },
    release() {
      if (released) return;
      released = true;
      heldHere.delete(path);
      const current = safeJson(readFileSafe(path)) as { pid?: number } | null;
      if (current?.pid === process.pid) unlinkSync(path);
    },
  };
}

function readFileSafe(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return 'null';
  }
}
