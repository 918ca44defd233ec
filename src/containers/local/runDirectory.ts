/**
 * Where local runs keep their files: `<baseDir>/<namespace>/<sessionId>/`,
 * usually `<dataDir>/runs/...`, so they outlive the node exactly like a
 * container's `/tmp` outlives a deploy. Each run directory holds the
 * wrapper's output and exit marker, `run.json` (the handle and when the run
 * started, written before `start` returns) and `work/`, the command's
 * working directory.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorCode } from '../../common/errorCode.js';
import { validateSessionId } from '../wrapper.js';

export interface RunRecord {
  handle: string;
  /** When `start` returned: the session's `startedAt`. */
  startedAt: Date;
}

export class RunDirectory {
  /** `<baseDir>/<namespace>`: every run of this namespace on this machine. */
  readonly root: string;

  constructor(baseDir: string, namespace: string, create = true) {
    this.root = join(baseDir, namespace);
    if (create) mkdirSync(this.root, { recursive: true });
  }

  /** Another node's root (named by a run's handle), looked at, never created. */
  static existing(root: string): RunDirectory {
    return new RunDirectory(root, '.', false);
  }

  dirOf(sessionId: string): string {
    return join(this.root, sessionId);
  }

  workDirOf(sessionId: string): string {
    return join(this.dirOf(sessionId), 'work');
  }

  /** Creates the run's directory; false when it exists already. */
  create(sessionId: string): boolean {
    try {
      mkdirSync(this.dirOf(sessionId));
    } catch (error) {
      if (errorCode(error) === 'EEXIST') return false;
      throw error;
    }
    mkdirSync(this.workDirOf(sessionId));
    return true;
  }

  /** Written whole or not at all (rename), so a crash never leaves half a record. */
  writeRecord(sessionId: string, record: RunRecord): void {
    const dir = this.dirOf(sessionId);
    const text = JSON.stringify({
      handle: record.handle,
      startedAt: record.startedAt.toISOString(),
    });
    writeFileSync(join(dir, '.run.json.tmp'), text);
    renameSync(join(dir, '.run.json.tmp'), join(dir, 'run.json'));
  }

  /** Null when missing or unreadable (a start that crashed before writing it). */
  readRecord(sessionId: string): RunRecord | null {
    let value: unknown;
    try {
      value = JSON.parse(readFileSync(join(this.dirOf(sessionId), 'run.json'), 'utf8'));
    } catch {
      return null;
    }
    const { handle, startedAt } = (value ?? {}) as { handle?: unknown; startedAt?: unknown };
    const at = typeof startedAt === 'string' ? new Date(startedAt) : null;
    if (typeof handle !== 'string' || at === null || Number.isNaN(at.getTime())) return null;
    return { handle, startedAt: at };
  }

  exists(sessionId: string): boolean {
    try {
      readdirSync(this.dirOf(sessionId));
      return true;
    } catch {
      return false;
    }
  }

  /** Session ids with a run directory here; anything else in the directory is ignored. */
  sessions(): string[] {
    return readdirSync(this.root, { withFileTypes: true })
      .filter((e) => e.isDirectory() && isSessionId(e.name))
      .map((e) => e.name);
  }

  remove(sessionId: string): void {
    rmSync(this.dirOf(sessionId), { recursive: true, force: true });
  }
}

function isSessionId(name: string): boolean {
  try {
    validateSessionId(name);
    return true;
  } catch {
    return false;
  }
}
