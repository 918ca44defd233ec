/**
 * The `ContainerBackend` over a `SimulatedCluster`. Like the Docker backends
 * it only knows the cluster through its API, so API faults, reschedules and
 * restarts (a new backend over the same cluster) behave as they would there.
 */
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
import { ContainerError, cutReason, isContainerError } from '../ContainerError.js';
import { withDeadline } from '../deadline.js';
import { DEFAULT_NAMESPACE, namespaceFilter, runLabels, validateNamespace } from '../namespace.js';
import { pingResultOf, toContainerError, unknownOrAbsent } from '../observation.js';
import { FOLLOW_SLICES, followPolled } from '../polledFollower.js';
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
import type { SimulatedCluster } from './SimulatedCluster.js';
import { simulatedOutputSource } from './simulatedOutputSource.js';

export interface SimulatedBackendOptions {
  /** Deadline of each API call, on the cluster's clock. */
  callTimeoutMs?: number;
  /** How long `attach` waits by default. */
  attachTimeoutMs?: number;
  outputLimitBytes?: number;
  /** Between two reads of a followed run's output file that found nothing new, on the cluster's clock. */
  followPollMs?: number;
  /**
   * Which runs are this backend's; one cluster can host several namespaces,
   * as one engine can. Defaults to `'default'`.
   */
  namespace?: string;
}

const DEFAULTS = {
  callTimeoutMs: 10_000,
  attachTimeoutMs: 4 * 60 * 60 * 1000,
  // As the Docker backends' (DOCKER_FOLLOW.pollMs), so a simulated card lags as a real one does.
  followPollMs: 1000,
};

export class SimulatedBackend implements ContainerBackend {
  readonly kind = 'simulated' as const;
  readonly adoptable = true;
  readonly namespace: string;
  private readonly trackers = new Map<string, RunTracker>();
  private readonly callTimeoutMs: number;
  private readonly attachTimeoutMs: number;
  private readonly outputLimitBytes: number;
  private readonly followPollMs: number;

  constructor(
    readonly cluster: SimulatedCluster,
    options: SimulatedBackendOptions = {},
  ) {
    this.namespace = validateNamespace(options.namespace ?? DEFAULT_NAMESPACE);
    this.callTimeoutMs = options.callTimeoutMs ?? DEFAULTS.callTimeoutMs;
    this.attachTimeoutMs = options.attachTimeoutMs ?? DEFAULTS.attachTimeoutMs;
    this.outputLimitBytes = options.outputLimitBytes ?? OUTPUT_LIMIT_BYTES;
    this.followPollMs = options.followPollMs ?? DEFAULTS.followPollMs;
  }

  private call<T>(work: Promise<T>, what: string): Promise<T> {
    return withDeadline(work, { clock: this.cluster.clock, ms: this.callTimeoutMs, what });
  }

  async start(spec: RunSpec): Promise<StartResult> {
    const handle = handleFor(spec.sessionId);
    const argv = wrapperArgv(spec.command);
    const env = wrapperEnv(spec.sessionId, spec.env);
    const created = await this.call(
      this.cluster.api.createService({
        name: handle,
        sessionId: spec.sessionId,
        image: spec.image,
        env,
        labels: runLabels(this.namespace, spec.sessionId, spec.labels),
      }),
      `create ${handle}`,
    );
    if (created.taskError !== null) {
      throw await this.removed(
        handle,
        new ContainerError('rejected', cutReason(created.taskError)),
      );
    }
    const tracker = new RunTracker(handle);
    const exec = await this.call(
      this.cluster.api.exec(handle, argv, env, (chunk) => tracker.push(chunk)),
      `exec in ${handle}`,
    ).catch(async (error: unknown) => {
      throw await this.removed(handle, error);
    });
    this.trackers.set(spec.sessionId, tracker);
    exec.done.then(
      (exit) => tracker.exit(exit),
      (error: unknown) =>
        tracker.fail(
          isContainerError(error)
            ? error
            : new ContainerError('engine', `exec in ${handle} failed`, { cause: error }),
        ),
    );
    return { handle, startedAt: new Date(exec.startedAt) };
  }

  /**
   * Removes a service whose start failed and hands back the start's error, as
   * the Docker backends do: a retry of the session then starts clean. The
   * cluster accepts a service on an image it cannot run and rejects its task,
   * as Swarm does; that is the `rejected` case.
   */
  private async removed(handle: string, error: unknown): Promise<unknown> {
    // Best effort: the API may be down too, and then the sweep removes what is left.
    await this.call(this.cluster.api.removeService(handle), `remove ${handle}`).catch(
      () => undefined,
    );
    return error;
  }

  /** The cluster's ping: fails while `failApi` is on, times out under `hangApi`. */
  ping(): Promise<PingResult> {
    return pingResultOf(this.call(this.cluster.api.ping(), 'ping'));
  }

  attach(ref: RunRef, options: AttachOptions = {}): Promise<RunExit> {
    const tracker = this.trackers.get(ref.sessionId);
    if (!tracker) return Promise.reject(notAttached(ref.handle));
    return tracker.attach(options, this.cluster.clock, this.attachTimeoutMs);
  }

  /**
   * Follows the output file of a run this backend did not start (adopted, or
   * whose attach broke) through the cluster's API: one read a period, from
   * where the last ended (polledFollower.ts). A reschedule or a removal
   * stops it; an API outage is waited out.
   */
  follow(ref: RunRef, options: FollowOptions): void {
    let path: string;
    try {
      path = outputPath(validateSessionId(ref.sessionId));
    } catch {
      options.onEnd?.(); // never throws: no file can be named for such a ref
      return;
    }
    const source = simulatedOutputSource(
      this.cluster,
      (work, what) => this.call(work, what),
      ref.handle,
      path,
    );
    followPolled(
      source,
      options,
      {
        clock: this.cluster.clock,
        pollMs: this.followPollMs,
        // As the Docker backends' (5 s after 1 s): a quiet run is read less often.
        quietPollMs: this.followPollMs * 5,
        ...FOLLOW_SLICES,
      },
      this.outputLimitBytes,
    );
  }

  /** Every run of a session is named after it (`rt-<sessionId>`), as on Swarm. */
  handleOf(sessionId: string): string {
    return handleFor(sessionId);
  }

  async observe(ref: RunRef): Promise<Observation> {
    let service: Awaited<ReturnType<SimulatedCluster['api']['inspectService']>>;
    try {
      service = await this.call(
        this.cluster.api.inspectService(ref.handle),
        `observe ${ref.handle}`,
      );
    } catch (error) {
      return unknownOrAbsent(error);
    }
    if (!service.container) return { presence: 'present', containerStartedAt: null, marker: null };
    const containerStartedAt = new Date(service.container.startedAt);
    try {
      const text = await this.call(
        this.cluster.api.readFile(ref.handle, markerPath(validateSessionId(ref.sessionId))),
        `read marker of ${ref.handle}`,
      );
      const exitCode = text === null ? null : parseMarker(text);
      return {
        presence: 'present',
        containerStartedAt,
        marker: exitCode === null ? null : { exitCode },
      };
    } catch (error) {
      const e = toContainerError(error, ref.handle);
      return { presence: 'present', containerStartedAt, marker: null, error: e };
    }
  }

  async readOutput(ref: RunRef): Promise<RunOutput> {
    const text = await this.call(
      this.cluster.api.readFile(ref.handle, outputPath(validateSessionId(ref.sessionId))),
      `read output of ${ref.handle}`,
    );
    if (text === null) throw new ContainerError('not_found', `${ref.handle} has no output file`);
    const bytes = Buffer.from(text);
    return runOutputFrom(
      bytes.subarray(Math.max(0, bytes.length - this.outputLimitBytes)),
      bytes.length,
    );
  }

  async remove(ref: RunRef): Promise<void> {
    try {
      await this.call(this.cluster.api.removeService(ref.handle), `remove ${ref.handle}`);
    } catch (error) {
      if (!(isContainerError(error) && error.code === 'not_found')) throw error;
    }
    this.trackers.delete(ref.sessionId);
  }

  /** This namespace's services, filtered by the cluster as Docker filters by label. */
  private ownServices() {
    return this.call(
      this.cluster.api.listServices({ label: namespaceFilter(this.namespace) }),
      'list services',
    );
  }

  async listHandles(): Promise<RunRef[]> {
    const services = await this.ownServices();
    return services.map((s) => ({ handle: s.name, sessionId: s.sessionId }));
  }

  async repin(image: string): Promise<RepinResult[]> {
    const services = await this.ownServices();
    const repinned: RepinResult[] = [];
    for (const s of services) {
      if (s.image === image) continue;
      await this.call(this.cluster.api.updateImage(s.name, image), `repin ${s.name}`);
      repinned.push({ handle: s.name, sessionId: s.sessionId, previousImage: s.image });
    }
    return repinned;
  }
}
