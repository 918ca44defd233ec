/**
 * Runs each session as a child process of this application, through the same
 * wrapper and files as the container backends, in a temp directory this
 * instance owns. Its runs die with the process, so it is never adoptable:
 * `recoveryAction` answers `fail` for kind `local`, and a new instance
 * reports every run it did not start as `absent`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { open, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { type Clock, systemClock } from '../Clock.js';
import type {
  AttachOptions,
  ContainerBackend,
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
  wrapperArgv,
  wrapperEnv,
} from '../wrapper.js';

export interface LocalBackendOptions {
  clock?: Clock;
  /** Parent of the run directory; defaults to the OS temp dir. */
  baseDir?: string;
  attachTimeoutMs?: number;
  outputLimitBytes?: number;
  /** Added to every run's environment (the host's own env is not passed through). */
  baseEnv?: Readonly<Record<string, string>>;
  /**
   * Names the run directory (`roundtable-local-<ns>-*`). Local runs are
   * children of this instance, so it only ever lists its own anyway.
   */
  namespace?: string;
}

interface LocalRun {
  child: ChildProcess;
  tracker: RunTracker;
}

export class LocalBackend implements ContainerBackend {
  readonly kind = 'local' as const;
  readonly adoptable = false;
  readonly namespace: string;
  /** The run directory: every wrapper file of this instance lives here. */
  readonly dir: string;
  private readonly runs = new Map<string, LocalRun>();
  private readonly clock: Clock;
  private readonly attachTimeoutMs: number;
  private readonly outputLimitBytes: number;
  private readonly baseEnv: Readonly<Record<string, string>>;
  /** The "container" of a local run is this instance: it starts when we do. */
  private readonly startedAt: Date;

  constructor(options: LocalBackendOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.namespace = validateNamespace(options.namespace ?? DEFAULT_NAMESPACE);
    this.dir = mkdtempSync(
      join(options.baseDir ?? tmpdir(), `roundtable-local-${this.namespace}-`),
    );
    this.attachTimeoutMs = options.attachTimeoutMs ?? 4 * 60 * 60 * 1000;
    this.outputLimitBytes = options.outputLimitBytes ?? OUTPUT_LIMIT_BYTES;
    this.baseEnv = options.baseEnv ?? { PATH: process.env.PATH ?? '/usr/bin:/bin' };
    this.startedAt = new Date(this.clock.now());
  }

  async start(spec: RunSpec): Promise<StartResult> {
    const handle = handleFor(spec.sessionId);
    const [file, ...args] = wrapperArgv(spec.command);
    if (this.runs.has(spec.sessionId)) {
      throw new ContainerError('conflict', `${handle} is already running`);
    }
    const tracker = new RunTracker(handle);
    // Its own process group, so remove() can stop the command and its children.
    const child = spawn(file as string, args, {
      env: { ...this.baseEnv, ...wrapperEnv(spec.sessionId, spec.env, this.dir) },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const decoder = new StringDecoder('utf8');
    child.stdout?.on('data', (data: Buffer) => tracker.push(decoder.write(data)));
    child.stderr?.on('data', (data: Buffer) => tracker.push(data.toString('utf8')));
    child.on('error', (error) =>
      tracker.fail(new ContainerError('engine', `could not run ${handle}`, { cause: error })),
    );
    child.on('close', (code, signal) => {
      tracker.push(decoder.end());
      if (code === null) {
        tracker.fail(
          new ContainerError('exec_lost', `${handle} was killed by ${signal ?? 'a signal'}`),
        );
      } else {
        tracker.exit({ exitCode: code });
      }
    });
    this.runs.set(spec.sessionId, { child, tracker });
    return { handle, startedAt: new Date(this.clock.now()) };
  }

  attach(ref: RunRef, options: AttachOptions = {}): Promise<RunExit> {
    const run = this.runs.get(ref.sessionId);
    if (!run) return Promise.reject(notAttached(ref.handle));
    return run.tracker.attach(options, this.clock, this.attachTimeoutMs);
  }

  async observe(ref: RunRef): Promise<Observation> {
    if (!this.runs.has(ref.sessionId)) {
      return { presence: 'absent', containerStartedAt: null, marker: null };
    }
    const text = await readFile(markerPath(ref.sessionId, this.dir), 'utf8').catch(() => null);
    const exitCode = text === null ? null : parseMarker(text);
    return {
      presence: 'present',
      containerStartedAt: this.startedAt,
      marker: exitCode === null ? null : { exitCode },
    };
  }

  async readOutput(ref: RunRef): Promise<RunOutput> {
    const path = outputPath(ref.sessionId, this.dir);
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

  async remove(ref: RunRef): Promise<void> {
    const run = this.runs.get(ref.sessionId);
    if (!run) return;
    this.runs.delete(ref.sessionId);
    if (run.child.exitCode === null && run.child.signalCode === null && run.child.pid) {
      try {
        process.kill(-run.child.pid, 'SIGKILL');
      } catch (error) {
        // ESRCH: the group is already gone, which is what we wanted.
        if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
      }
    }
    for (const path of [outputPath(ref.sessionId, this.dir), markerPath(ref.sessionId, this.dir)]) {
      rmSync(path, { force: true });
    }
  }

  async listHandles(): Promise<RunRef[]> {
    return [...this.runs.keys()].map((sessionId) => ({ handle: handleFor(sessionId), sessionId }));
  }

  /** The host is the engine: if this code runs, so can a child process. */
  async ping(): Promise<PingResult> {
    return { ok: true };
  }

  /** Local runs use the host, not an image: nothing to re-pin. */
  async repin(_image: string): Promise<RepinResult[]> {
    return [];
  }

  /** Stops every run and deletes the run directory. */
  async close(): Promise<void> {
    for (const sessionId of [...this.runs.keys()]) {
      await this.remove({ handle: handleFor(sessionId), sessionId });
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
