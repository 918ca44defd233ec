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
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
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
import { notAttached, RunTracker } from '../RunTracker.js';
import {
  handleFor,
  markerPath,
  OUTPUT_LIMIT_BYTES,
  outputPath,
  parseMarker,
  runOutputFrom,
  validateSessionId,
  wrapperArgv,
  wrapperEnv,
} from '../wrapper.js';
import { observedFromAnotherBoot } from './anotherBoot.js';
import { formatLocalHandle, type LocalHandle, parseLocalHandle } from './localHandle.js';
import { OutputFollower, startOfTail } from './outputFollower.js';
import { STOP_GRACE_MS, signalGroup, stopGroup } from './processGroup.js';
import { hostProcessTable, type ProcessTable } from './processTable.js';
import { RunDirectory, type RunRecord } from './runDirectory.js';

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

interface LocalRun {
  child: ChildProcess;
  tracker: RunTracker;
  follower: OutputFollower;
}

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
    const [file, ...args] = wrapperArgv(spec.command);
    const name = handleFor(sessionId);
    if (this.runs.has(sessionId) || !this.files.create(sessionId)) {
      throw new ContainerError('conflict', `${name} already has a run directory in ${this.dir}`);
    }
    const dir = this.files.dirOf(sessionId);
    const tracker = new RunTracker(name);
    const follower = new OutputFollower(
      outputPath(sessionId, dir),
      (chunk) => tracker.push(chunk),
      this.clock,
      this.outputPollMs,
    );
    follower.start(dir);
    let child: ChildProcess;
    try {
      // detached: setsid(), so the run is its own session and process group and
      // no terminal signal (Ctrl-C on the node) reaches it; stdio to /dev/null.
      child = spawn(file as string, args, {
        cwd: this.files.workDirOf(sessionId),
        env: { ...this.baseEnv, ...wrapperEnv(sessionId, spec.env, dir) },
        stdio: 'ignore',
        detached: true,
      });
    } catch (error) {
      follower.close();
      this.files.remove(sessionId);
      throw new ContainerError('engine', `could not run ${name}`, { cause: error });
    }
    const pid = child.pid;
    if (pid === undefined) {
      follower.close();
      this.files.remove(sessionId);
      throw new ContainerError('engine', `could not run ${name}: no process was created`);
    }
    // Read now, synchronously: the process cannot have been reaped yet, so its
    // entry is there even if the command already ended.
    const identity = this.processes.identityOf(pid);
    const handle = formatLocalHandle({
      sessionId,
      pid,
      startToken: identity?.startToken ?? '0',
      bootToken: this.processes.bootToken,
      dir: this.dir,
    });
    const startedAt = new Date(this.clock.now());
    this.files.writeRecord(sessionId, { handle, startedAt });
    child.unref();
    child.on('error', (error) =>
      tracker.fail(
        new ContainerError('exec_lost', `${name} could not be waited on`, { cause: error }),
      ),
    );
    child.on('exit', (_code, signal) => {
      follower.finish();
      const exitCode = this.readMarker(sessionId);
      if (exitCode !== null) tracker.exit({ exitCode });
      else
        tracker.fail(
          new ContainerError(
            'exec_lost',
            `${name} ended without an exit marker${signal ? ` (${signal})` : ''}`,
          ),
        );
    });
    this.runs.set(sessionId, { child, tracker, follower });
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
    if (options.signal.aborted || h === null) return;
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
    options.signal.addEventListener('abort', () => follower.finish(), { once: true });
    // What is there already, soon, not from inside the caller's call.
    this.clock.setTimeout(() => follower.drain(), 0);
  }

  private readMarker(sessionId: string, files = this.files): number | null {
    try {
      return parseMarker(readFileSync(markerPath(sessionId, files.dirOf(sessionId)), 'utf8'));
    } catch {
      return null;
    }
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

  private sameProcess(h: LocalHandle): boolean {
    const now = this.processes.identityOf(h.pid);
    return (
      now !== null &&
      !now.zombie &&
      now.startToken === h.startToken &&
      h.bootToken === this.processes.bootToken
    );
  }

  async observe(ref: RunRef): Promise<Observation> {
    const absent: Observation = { presence: 'absent', containerStartedAt: null, marker: null };
    const h = this.parsed(ref);
    if (h === null) return absent;
    const files = this.filesOf(h);
    const record = files.readRecord(ref.sessionId);
    if (h.bootToken !== this.processes.bootToken) return this.fromAnotherBoot(ref, h, record);
    if (!files.exists(ref.sessionId)) return absent;
    const startedAt = record?.startedAt ?? null;
    // The process first, then the marker: the wrapper writes the marker before
    // it exits, so a process seen gone and then no marker means none will come.
    const now = this.processes.identityOf(h.pid);
    const exitCode = this.readMarker(ref.sessionId, files);
    if (exitCode !== null) {
      return { presence: 'present', containerStartedAt: startedAt, marker: { exitCode } };
    }
    if (now === null || now.zombie) return absent;
    if (this.sameProcess(h))
      return { presence: 'present', containerStartedAt: startedAt, marker: null };
    // The pid is someone else's now. It started after our run (the kernel does
    // not hand out a pid in use); the second-grained boot time may say otherwise.
    const later = Math.max(now.startedAt?.getTime() ?? 0, (startedAt?.getTime() ?? 0) + 1);
    return { presence: 'present', containerStartedAt: new Date(later), marker: null };
  }

  /** A run of another boot (a reboot, or another machine): see `anotherBoot.ts`. */
  private fromAnotherBoot(ref: RunRef, h: LocalHandle, record: RunRecord | null): Observation {
    const files = this.filesOf(h);
    return observedFromAnotherBoot({
      exitCode: record === null ? null : this.readMarker(ref.sessionId, files),
      startedAt: record?.startedAt ?? null,
      ownRecord: files === this.files && record?.handle === ref.handle,
    });
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
      const ours = leader === null || leader.zombie ? signalGroup(h.pid, 0) : this.sameProcess(h);
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
