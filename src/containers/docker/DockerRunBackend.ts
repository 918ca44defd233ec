/**
 * What the Swarm and plain Docker backends share: a long-lived keepalive
 * container per session, the command started in it through `docker exec`
 * and the wrapper (runExec.ts), and the wrapper's files read back with short
 * execs (wrapperFiles.ts).
 * Subclasses say how a session's container is created, found, listed,
 * re-pinned and removed.
 *
 * Because the command is an exec, not the container's main process, an
 * application restart leaves it running; because its files live in the
 * container's `/tmp`, a replaced container provably lost them.
 */
import type Docker from 'dockerode';
import { type Clock, systemClock } from '../Clock.js';
import type {
  AttachOptions,
  BackendKind,
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
import { withDeadline } from '../deadline.js';
import { DEFAULT_NAMESPACE, validateNamespace } from '../namespace.js';
import { pingResultOf, unknownOrAbsent } from '../observation.js';
import { notAttached, RunTracker } from '../RunTracker.js';
import {
  handleFor,
  OUTPUT_LIMIT_BYTES,
  outputPath,
  validateSessionId,
  wrapperArgv,
  wrapperEnv,
} from '../wrapper.js';
import { dockerClient, samePin } from './dockerClient.js';
import { asStartRefusal, classifyDockerError } from './dockerErrors.js';
import { followDockerRun } from './dockerOutputSource.js';
import { startRunExec } from './runExec.js';
import { type CurrentContainer, type StartHold, waitForRunning } from './startWait.js';
import { type EngineCalls, readMarkerIn, readOutputIn } from './wrapperFiles.js';

export interface DockerBackendOptions {
  /** A configured client; defaults to `new Docker()`, which reads `DOCKER_HOST`. */
  docker?: Docker;
  /** Engine address, e.g. `unix:///run/roundtable/docker.sock`, when no client is given. */
  host?: string;
  clock?: Clock;
  /** Deadline of each engine call. */
  callTimeoutMs?: number;
  /** How long start waits for the session's container to run. */
  startTimeoutMs?: number;
  /** How long `attach` waits by default. */
  attachTimeoutMs?: number;
  outputLimitBytes?: number;
  /**
   * Which runs are this backend's: it labels what it creates with it, and
   * lists and re-pins only those. Defaults to `'default'`.
   */
  namespace?: string;
}

const DEFAULTS = {
  callTimeoutMs: 15_000,
  startTimeoutMs: 120_000,
  attachTimeoutMs: 4 * 60 * 60 * 1000,
  pollMs: 250,
};

/**
 * The container's main process: idle until stopped, answering SIGTERM at once
 * so removal does not wait out the stop grace period.
 */
export const KEEPALIVE_COMMAND = [
  'sh',
  '-c',
  'trap "exit 0" TERM INT; while :; do sleep 3600 & wait $!; done',
];

export type { CurrentContainer, StartHold };
// Re-exported: callers (the CLI, the subclasses) know this module as the Docker entry.
export { dockerClient, samePin };

export abstract class DockerRunBackend implements ContainerBackend {
  abstract readonly kind: BackendKind;
  readonly adoptable = true;
  readonly namespace: string;
  protected readonly docker: Docker;
  protected readonly clock: Clock;
  protected readonly callTimeoutMs: number;
  private readonly startTimeoutMs: number;
  private readonly attachTimeoutMs: number;
  private readonly outputLimitBytes: number;
  private readonly trackers = new Map<string, RunTracker>();

  constructor(options: DockerBackendOptions = {}) {
    this.namespace = validateNamespace(options.namespace ?? DEFAULT_NAMESPACE);
    this.docker = options.docker ?? dockerClient(options.host);
    this.clock = options.clock ?? systemClock;
    this.callTimeoutMs = options.callTimeoutMs ?? DEFAULTS.callTimeoutMs;
    this.startTimeoutMs = options.startTimeoutMs ?? DEFAULTS.startTimeoutMs;
    this.attachTimeoutMs = options.attachTimeoutMs ?? DEFAULTS.attachTimeoutMs;
    this.outputLimitBytes = options.outputLimitBytes ?? OUTPUT_LIMIT_BYTES;
  }

  /** Creates the session's service or container running `KEEPALIVE_COMMAND`. */
  protected abstract create(handle: string, spec: RunSpec): Promise<void>;
  /** The running container; null when none runs now; throws `not_found` if the handle is gone. */
  protected abstract currentContainer(handle: string): Promise<CurrentContainer | null>;
  protected abstract destroy(handle: string): Promise<void>;
  /** This namespace's runs, filtered by the engine (both labels), never after the fact. */
  protected abstract list(): Promise<Array<RunRef & { image: string }>>;
  /** Moves the handle onto `image`; the engine replaces its container. */
  protected abstract repinOne(handle: string, image: string): Promise<void>;
  /** What keeps a just-created handle from running, if the engine says; null when it does not. */
  protected abstract startHold(handle: string): Promise<StartHold | null>;

  /**
   * One engine call with its deadline and a typed error. The signal aborts the
   * HTTP request when the deadline passes, so a hung engine does not pile up
   * open sockets.
   */
  protected call<T>(what: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    let started: Promise<T>;
    try {
      started = work(controller.signal);
    } catch (error) {
      started = Promise.reject(error);
    }
    return withDeadline(
      started,
      { clock: this.clock, ms: this.callTimeoutMs, what, onAbandon: () => controller.abort() },
      (error) => classifyDockerError(error, what),
    );
  }

  async start(spec: RunSpec): Promise<StartResult> {
    const handle = handleFor(spec.sessionId);
    const argv = wrapperArgv(spec.command);
    const env = wrapperEnv(spec.sessionId, spec.env);
    try {
      await this.create(handle, spec);
    } catch (error) {
      // Nothing was created; a 400 or 404 here is the engine refusing the spec.
      throw asStartRefusal(error);
    }
    const tracker = new RunTracker(handle);
    await this.removedUnlessStarted(handle, async () => {
      const container = await waitForRunning({
        clock: this.clock,
        handle,
        timeoutMs: this.startTimeoutMs,
        pollMs: DEFAULTS.pollMs,
        current: () => this.currentContainer(handle),
        hold: () => this.startHold(handle),
      });
      await startRunExec(
        this.engine,
        { containerId: container.id, handle, sessionId: spec.sessionId, argv, env },
        tracker,
      );
    });
    // Taken after the engine accepted the exec, so clock skew is less likely to
    // make a container that started before the exec look newer than it.
    const startedAt = new Date(this.clock.now());
    this.trackers.set(spec.sessionId, tracker);
    return { handle, startedAt };
  }

  /**
   * Runs the rest of a start after `create`; if it fails, the handle is
   * removed again, so a retry of the same session starts clean instead of
   * meeting `conflict`, and Swarm stops retrying a rejected task every second.
   */
  private async removedUnlessStarted<T>(handle: string, rest: () => Promise<T>): Promise<T> {
    try {
      return await rest();
    } catch (error) {
      // Best effort: the engine may be down too, and then the stale-handle
      // sweep (listHandles) removes what is left; the start's error is the news.
      await this.destroy(handle).catch(() => undefined);
      throw error;
    }
  }

  /** `docker ping`: the engine answers at all, within the call deadline. */
  ping(): Promise<PingResult> {
    // dockerode's ping takes `{ abortSignal }`; its types declare no options.
    const ping = this.docker.ping as (opts: { abortSignal: AbortSignal }) => Promise<unknown>;
    return pingResultOf(
      this.call('ping', (abortSignal) => ping.call(this.docker, { abortSignal })),
    );
  }

  attach(ref: RunRef, options: AttachOptions = {}): Promise<RunExit> {
    const tracker = this.trackers.get(ref.sessionId);
    if (!tracker) return Promise.reject(notAttached(ref.handle));
    return tracker.attach(options, this.clock, this.attachTimeoutMs);
  }

  /**
   * The output file of a run this instance did not start (adopted, or whose
   * attach broke), read with a short exec a period (dockerOutputSource.ts).
   */
  follow(ref: RunRef, options: FollowOptions): void {
    followDockerRun(ref, options, {
      engine: this.engine,
      clock: this.clock,
      current: () => this.currentContainer(ref.handle),
      limitBytes: this.outputLimitBytes,
    });
  }

  /** The marker's exit code, null when it is not there (yet, or any more). */
  private readMarker(containerId: string, sessionId: string): Promise<number | null> {
    return readMarkerIn(this.engine, containerId, sessionId);
  }

  /** The engine and its deadline-bound call, for the wrapper-file reads. */
  private get engine(): EngineCalls {
    return { docker: this.docker, call: (what, work) => this.call(what, work) };
  }

  /** Every run of a session is named after it (`rt-<sessionId>`). */
  handleOf(sessionId: string): string {
    return handleFor(sessionId);
  }

  async observe(ref: RunRef): Promise<Observation> {
    let container: CurrentContainer | null;
    try {
      validateSessionId(ref.sessionId);
      container = await this.currentContainer(ref.handle);
    } catch (error) {
      return unknownOrAbsent(error);
    }
    if (!container) return { presence: 'present', containerStartedAt: null, marker: null };
    try {
      const exitCode = await this.readMarker(container.id, ref.sessionId);
      return {
        presence: 'present',
        containerStartedAt: container.startedAt,
        marker: exitCode === null ? null : { exitCode },
      };
    } catch (error) {
      // The container may have died between the two calls: its start time
      // stands, the marker is simply not known.
      const e = classifyDockerError(error, `read marker of ${ref.handle}`);
      return {
        presence: 'present',
        containerStartedAt: container.startedAt,
        marker: null,
        error: e,
      };
    }
  }

  async readOutput(ref: RunRef): Promise<RunOutput> {
    const path = outputPath(validateSessionId(ref.sessionId));
    const container = await this.currentContainer(ref.handle);
    if (!container) throw new ContainerError('not_found', `${ref.handle} has no running container`);
    return readOutputIn(this.engine, container.id, ref.handle, path, this.outputLimitBytes);
  }

  async remove(ref: RunRef): Promise<void> {
    try {
      await this.destroy(ref.handle);
    } catch (error) {
      if (!(error instanceof ContainerError && error.code === 'not_found')) throw error;
    }
    this.trackers.delete(ref.sessionId);
  }

  async listHandles(): Promise<RunRef[]> {
    return (await this.list()).map(({ handle, sessionId }) => ({ handle, sessionId }));
  }

  async repin(image: string): Promise<RepinResult[]> {
    const repinned: RepinResult[] = [];
    for (const run of await this.list()) {
      if (samePin(run.image, image)) continue;
      await this.repinOne(run.handle, image);
      repinned.push({ handle: run.handle, sessionId: run.sessionId, previousImage: run.image });
    }
    return repinned;
  }
}
