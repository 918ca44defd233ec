/**
 * Runs each session as a process on this machine, as this OS user, through
 * the same wrapper as the container backends. Each run is detached (its own
 * session and process group, stdio not tied to this process), so it outlives
 * the node the way a container outlives a deploy, and its files live in a
 * run directory under the node's data directory (`runDirectory.ts`).
 *
 * The handle names the process by pid and kernel start time
 * (`localHandle.ts`), so after a restart `observe` tells the run apart from
 * another process that got its pid: present (same process), replaced (same
 * pid, another start: reported as a later `containerStartedAt`, which the
 * adopt policy reads as `container_replaced`), absent (no process, no
 * marker), exited (the marker). Nothing here ever signals a process whose
 * start time is not the run's.
 *
 * The handle also names the run directory's root and the boot, so another
 * node on this machine (its own data directory) observes, follows, reads
 * and removes the run where its files are, and a node that cannot observe
 * it (another machine) says `unobservable`, never `absent`.
 *
 * Starting a run is spawnLocalRun.ts; telling what became of one,
 * observeLocalRun.ts.
 */
import { open, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type Clock, systemClock } from '../Clock.js';
import type {
  AttachOptions,
  ContainerBackend,
  FollowOptions,
  Observation,
  PingResult,
  RepinResult,
  RunExit,
  RunOutput,
  RunRef,
  RunSpec,
  StartResult,
} from '../ContainerBackend.js';
import { ContainerError } from '../ContainerError.js';
import { DEFAULT_NAMESPACE, validateNamespace } from '../namespace.js';
import { notAttached } from '../RunTracker.js';
import {
  handleFor,
  OUTPUT_LIMIT_BYTES,
  outputPath,
  runOutputFrom,
  validateSessionId,
} from '../wrapper.js';
import { type LocalHandle, parseLocalHandle } from './localHandle.js';
import { observeLocalRun, sameProcess } from './observeLocalRun.js';
import { OutputFollower, startOfTail } from './outputFollower.js';
import { STOP_GRACE_MS, signalGroup, stopGroup } from './processGroup.js';
import { hostProcessTable, type ProcessTable } from './processTable.js';
import { RunDirectory } from './runDirectory.js';
import { type LocalRun, spawnLocalRun } from './spawnLocalRun.js';

export interface LocalBackendOptions {
  /** Parent of the namespaces' run directories, e.g. `<dataDir>/runs`. */
  baseDir: string;
  clock?: Clock;
  attachTimeoutMs?: number;
  outputLimitBytes?: number;
  /** Added to every run's environment (the host's own env is not passed through). */
  baseEnv?: Readonly<Record<string, string>>;
  /** Each namespace has its own directory: `listHandles` sees only its own. */
  namespace?: string;
  /** Between SIGTERM and SIGKILL when a run is removed (cancelled). */
  stopGraceMs?: number;
  /** Fallback poll of a live run's output file, for file systems without change events. */
  outputPollMs?: number;
  /** How pids and start times are read; the host's by default. */
  processes?: ProcessTable;
}

/** What `follow` shows of an adopted run's output so far, unless told: a card's worth and more. */
const FOLLOW_TAIL_BYTES = 64 * 1024;

const ABSENT: Observation = { presence: 'absent', containerStartedAt: null, marker: null };

/** What a run's environment has from the host besides `baseEnv`: enough for a shell to feel at home. */
function hostBaseEnv(): Record<string, string> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  for (const key of ['HOME', 'USER', 'LOGNAME', 'LANG', 'TZ']) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  return env;
}

export class LocalBackend implements ContainerBackend {
  readonly kind = 'local' as const;
  readonly adoptable = true;
  readonly namespace: string;
  /** This namespace's run directory. */
  readonly dir: string;
  private readonly runs = new Map<string, LocalRun>();
  private readonly files: RunDirectory;
  private readonly clock: Clock;
  private readonly processes: ProcessTable;
  private readonly attachTimeoutMs: number;
  private readonly outputLimitBytes: number;
  private readonly baseEnv: Readonly<Record<string, string>>;
  private readonly stopGraceMs: number;
  private readonly outputPollMs: number;

  constructor(options: LocalBackendOptions) {
    this.clock = options.clock ?? systemClock;
    this.namespace = validateNamespace(options.namespace ?? DEFAULT_NAMESPACE);
    this.files = new RunDirectory(options.baseDir, this.namespace);
    this.dir = this.files.root;
    this.processes = options.processes ?? hostProcessTable();
    this.attachTimeoutMs = options.attachTimeoutMs ?? 4 * 60 * 60 * 1000;
    this.outputLimitBytes = options.outputLimitBytes ?? OUTPUT_LIMIT_BYTES;
    this.baseEnv = options.baseEnv ?? hostBaseEnv();
    this.stopGraceMs = options.stopGraceMs ?? STOP_GRACE_MS;
    this.outputPollMs = options.outputPollMs ?? 250;
  }

  async start(spec: RunSpec): Promise<StartResult> {
    const sessionId = validateSessionId(spec.sessionId);
    if (this.runs.has(sessionId) || !this.files.create(sessionId)) {
      const name = handleFor(sessionId);
      throw new ContainerError('conflict', `${name} already has a run directory in ${this.dir}`);
    }
    const { run, handle, startedAt } = spawnLocalRun(sessionId, spec, {
      files: this.files,
      processes: this.processes,
      clock: this.clock,
      baseEnv: this.baseEnv,
      outputPollMs: this.outputPollMs,
    });
    this.runs.set(sessionId, run);
    return { handle, startedAt };
  }

  attach(ref: RunRef, options: AttachOptions = {}): Promise<RunExit> {
    const run = this.runs.get(ref.sessionId);
    if (!run) return Promise.reject(notAttached(ref.handle));
    return run.tracker.attach(options, this.clock, this.attachTimeoutMs);
  }

  /**
   * Follows the output file of a run started by another node's backend (or
   * by this one, whose attach broke): from `fromByte`, or from the first
   * whole line of the last `tailBytes` written (at most the output limit,
   * as `readOutput`), then each write, until `signal` aborts, which reads
   * to the end first.
   */
  follow(ref: RunRef, options: FollowOptions): void {
    const h = this.parsed(ref);
    if (options.signal.aborted || h === null) {
      options.onEnd?.();
      return;
    }
    const dir = this.filesOf(h).dirOf(ref.sessionId);
    const path = outputPath(ref.sessionId, dir);
    const tail = Math.min(options.tailBytes ?? FOLLOW_TAIL_BYTES, this.outputLimitBytes);
    const follower = new OutputFollower(
      path,
      options.onOutput,
      this.clock,
      this.outputPollMs,
      options.fromByte ?? startOfTail(path, tail),
    );
    follower.start(dir);
    // A stop reads what is there first: stopped on the marker, that is everything.
    const stop = () => {
      follower.finish();
      options.onEnd?.();
    };
    options.signal.addEventListener('abort', stop, { once: true });
    // What is there already, soon, not from inside the caller's call.
    this.clock.setTimeout(() => follower.drain(), 0);
  }

  /** Where the run's files are: the root its handle names, else this node's own. */
  private filesOf(h: LocalHandle | null): RunDirectory {
    return h?.dir === undefined || h.dir === this.dir ? this.files : RunDirectory.existing(h.dir);
  }

  /** The handle, if it is a local one for this session. */
  private parsed(ref: RunRef): LocalHandle | null {
    const h = parseLocalHandle(ref.handle);
    return h !== null && h.sessionId === ref.sessionId ? h : null;
  }

  /**
   * A local handle names the process (pid, start time), so it is read back
   * from the run's record, written in the same synchronous step as the
   * spawn. Only runs under this backend's own directory can be found.
   */
  handleOf(sessionId: string): string | null {
    return this.files.readRecord(validateSessionId(sessionId))?.handle ?? null;
  }

  async observe(ref: RunRef): Promise<Observation> {
    const h = this.parsed(ref);
    if (h === null) return ABSENT;
    const files = this.filesOf(h);
    return observeLocalRun(ref, h, { files, own: files === this.files, processes: this.processes });
  }

  async readOutput(ref: RunRef): Promise<RunOutput> {
    const files = this.filesOf(this.parsed(ref));
    const path = outputPath(validateSessionId(ref.sessionId), files.dirOf(ref.sessionId));
    let size: number;
    try {
      size = (await stat(path)).size;
    } catch (error) {
      throw new ContainerError('not_found', `${ref.handle} has no output file`, { cause: error });
    }
    const keep = Math.min(size, this.outputLimitBytes);
    const file = await open(path, 'r');
    try {
      const tail = Buffer.alloc(keep);
      const { bytesRead } = await file.read(tail, 0, keep, size - keep);
      return runOutputFrom(tail.subarray(0, bytesRead), size);
    } finally {
      await file.close();
    }
  }

  /**
   * Stops the run's process group (SIGTERM, SIGKILL after `stopGraceMs`) and
   * deletes its directory (where the handle says, when this node can
   * observe the run there). The group is signalled only while its leader is
   * the run's own process, or gone with members left: a pid stays allocated
   * while it names a live group, so such a group can only be the run's.
   */
  async remove(ref: RunRef): Promise<void> {
    validateSessionId(ref.sessionId);
    const run = this.runs.get(ref.sessionId);
    this.runs.delete(ref.sessionId);
    const h = this.parsed(ref);
    // Only in the boot the run started in: a pid or group of another boot or machine is not the run's.
    if (h !== null && h.bootToken === this.processes.bootToken) {
      const leader = this.processes.identityOf(h.pid);
      const ours =
        leader === null || leader.zombie ? signalGroup(h.pid, 0) : sameProcess(h, this.processes);
      if (ours) await stopGroup(h.pid, { clock: this.clock, graceMs: this.stopGraceMs });
    }
    run?.follower.close();
    // Another boot's files elsewhere may belong to a run still going on its
    // machine (a shared path): only the node that can observe it deletes them.
    const files = this.filesOf(h);
    if (h === null || h.bootToken === this.processes.bootToken || files === this.files) {
      files.remove(ref.sessionId);
    }
  }

  async listHandles(): Promise<RunRef[]> {
    return this.files.sessions().map((sessionId) => ({
      // A directory whose record was never written (a start that crashed) is
      // listed under the plain name, so the stale-handle sweep still clears it.
      handle: this.files.readRecord(sessionId)?.handle ?? handleFor(sessionId),
      sessionId,
    }));
  }

  /** The host is the engine: if this code runs, so can a process. */
  async ping(): Promise<PingResult> {
    return { ok: true };
  }

  /** Local runs use the host, not an image: nothing to re-pin. */
  async repin(_image: string): Promise<RepinResult[]> {
    return [];
  }

  /**
   * Stops following output. The runs go on, like containers when the node
   * stops; the next backend over the same directory observes them.
   */
  close(): void {
    for (const run of this.runs.values()) run.follower.close();
    this.runs.clear();
  }

  /** Where a session's files are, for tools and tests. */
  runDir(sessionId: string): string {
    return join(this.files.dirOf(validateSessionId(sessionId)));
  }
}
