/**
 * The production backend: one Docker Swarm service per session, labelled
 * with the session id, so the run outlives the application and can be found
 * again. Swarm restarts a lost task as a new container (later `StartedAt`,
 * empty `/tmp`), which is exactly what the adopt policy detects.
 */
import type { RunRef, RunSpec } from '../ContainerBackend.js';
import { isContainerError } from '../ContainerError.js';
import { namespaceFilter, runLabels } from '../namespace.js';
import { SESSION_LABEL } from '../wrapper.js';
import {
  type CurrentContainer,
  DockerRunBackend,
  KEEPALIVE_COMMAND,
  type StartHold,
} from './DockerRunBackend.js';

/** Swarm durations are nanoseconds. */
const SECOND_NS = 1_000_000_000;

/** The part of a Swarm task we read (dockerode types tasks as `any`). */
interface SwarmTask {
  Status?: {
    State?: string;
    Err?: string;
    Timestamp?: string;
    ContainerStatus?: { ContainerID?: string };
  };
}

/**
 * Task states that mean the engine would not run the spec: `rejected` (it
 * could not even create the container, e.g. "No such image") and `failed`
 * (the container died before the run could start in it).
 */
const REFUSED_STATES = new Set(['rejected', 'failed']);

export class SwarmBackend extends DockerRunBackend {
  readonly kind = 'swarm' as const;

  protected async create(handle: string, spec: RunSpec): Promise<void> {
    await this.call(`create service ${handle}`, () =>
      // The two-argument form: with one argument dockerode sends the spec as the auth header.
      this.docker.createService(undefined as never, {
        Name: handle,
        Labels: runLabels(this.namespace, spec.sessionId, spec.labels),
        TaskTemplate: {
          ContainerSpec: {
            Image: spec.image,
            Command: KEEPALIVE_COMMAND,
            StopGracePeriod: SECOND_NS,
          },
          RestartPolicy: { Condition: 'any', Delay: SECOND_NS, MaxAttempts: 0 },
        },
        Mode: { Replicated: { Replicas: 1 } },
      }),
    );
  }

  protected async currentContainer(handle: string): Promise<CurrentContainer | null> {
    // A missing service throws not_found here, which observe reports as absent.
    await this.call(`inspect service ${handle}`, (abortSignal) =>
      this.docker.getService(handle).inspect({ abortSignal }),
    );
    const tasks: SwarmTask[] = await this.call(`list tasks of ${handle}`, (abortSignal) =>
      this.docker.listTasks({
        filters: { service: [handle], 'desired-state': ['running'] },
        abortSignal,
      }),
    );
    const running = tasks
      .filter((t) => t.Status?.State === 'running' && t.Status.ContainerStatus?.ContainerID)
      .sort((a, b) => timestampOf(b) - timestampOf(a));
    const id = running[0]?.Status?.ContainerStatus?.ContainerID;
    if (!id) return null;
    try {
      const info = await this.call(`inspect container of ${handle}`, (abortSignal) =>
        this.docker.getContainer(id).inspect({ abortSignal }),
      );
      if (!info.State.Running) return null;
      return { id, startedAt: parseStartedAt(info.State.StartedAt) };
    } catch (error) {
      // The task's container went away between the two calls: none is running now.
      if (isContainerError(error) && error.code === 'not_found') return null;
      throw error;
    }
  }

  /**
   * A new service's tasks, newest first: one that Swarm rejected or that
   * failed with an error is a refusal (Swarm would retry it every second,
   * forever). Any task's error, or the newest's state, explains a wait.
   * Only called for a service this start just created, so every task is ours.
   */
  protected async startHold(handle: string): Promise<StartHold | null> {
    const tasks: SwarmTask[] = await this.call(`list tasks of ${handle}`, (abortSignal) =>
      this.docker.listTasks({ filters: { service: [handle] }, abortSignal }),
    );
    const newest = [...tasks].sort((a, b) => timestampOf(b) - timestampOf(a));
    const refused = newest.find((t) => REFUSED_STATES.has(t.Status?.State ?? '') && t.Status?.Err);
    if (refused?.Status?.Err) return { refused: true, reason: refused.Status.Err };
    const status = newest[0]?.Status;
    if (!status) return null;
    const reason = status.Err ? `${status.State}: ${status.Err}` : `task ${status.State}`;
    return { refused: false, reason };
  }

  protected async destroy(handle: string): Promise<void> {
    await this.call(`remove service ${handle}`, () => this.docker.getService(handle).remove());
  }

  protected async list(): Promise<Array<RunRef & { image: string }>> {
    const services = await this.call('list services', (abortSignal) =>
      this.docker.listServices({
        filters: { label: namespaceFilter(this.namespace) },
        abortSignal,
      }),
    );
    return services.flatMap((s) => {
      const sessionId = s.Spec?.Labels?.[SESSION_LABEL];
      const handle = s.Spec?.Name;
      if (!sessionId || !handle) return [];
      return [{ handle, sessionId, image: imageOf(s.Spec) }];
    });
  }

  protected async repinOne(handle: string, image: string): Promise<void> {
    const service = this.docker.getService(handle);
    const info = await this.call(`inspect service ${handle}`, () => service.inspect());
    // Only the image changes; everything else is sent back as the engine gave it.
    const spec = info.Spec as { TaskTemplate?: { ContainerSpec?: object } };
    await this.call(`re-pin ${handle}`, () =>
      service.update({
        _query: { version: info.Version.Index },
        _body: {
          ...spec,
          TaskTemplate: {
            ...spec.TaskTemplate,
            ContainerSpec: { ...spec.TaskTemplate?.ContainerSpec, Image: image },
          },
        },
      }),
    );
  }
}

function timestampOf(task: SwarmTask): number {
  const ms = Date.parse(task.Status?.Timestamp ?? '');
  return Number.isFinite(ms) ? ms : 0;
}

/** The pinned image of a service spec (the types model TaskSpec as a union without it). */
function imageOf(spec: unknown): string {
  const image = (spec as { TaskTemplate?: { ContainerSpec?: { Image?: unknown } } } | undefined)
    ?.TaskTemplate?.ContainerSpec?.Image;
  return typeof image === 'string' ? image : '';
}

/** Docker's zero time (`0001-01-01...`) means "never started": unknown, not a date. */
export function parseStartedAt(value: string | undefined): Date | null {
  const ms = value ? Date.parse(value) : Number.NaN;
  return Number.isFinite(ms) && ms > 0 ? new Date(ms) : null;
}
