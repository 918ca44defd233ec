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

/**
 * Claims `dataDir` for this process. Throws `CLI_IN_USE` when a live process
 * holds it; a stale file (its process is gone) is replaced.
 */
export function claimNodeFile(dataDir: string, engine: NodeInfo['engine']): NodeClaim {
  mkdirSync(dataDir, { recursive: true });
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
      if (errorCode(error) !== 'EEXIST' || attempt > 0) {
        throw new CliError('CLI_IN_USE', `cannot claim ${path}`, { cause: error });
      }
      const live = readLiveNode(dataDir);
      if (live !== null) {
        throw new CliError(
          'CLI_IN_USE',
          `${dataDir} is in use by process ${live.pid}${live.url ? ` (board at ${live.url})` : ''}; stop it first, or use another --data-dir`,
        );
      }
      unlinkSync(path);
    }
  }
  let released = false;
  return {
    setUrl(url) {
      if (released) return;
      info.url = url;
      writeFileSync(path, JSON.stringify(info));
    },
    release() {
      if (released) return;
      released = true;
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
