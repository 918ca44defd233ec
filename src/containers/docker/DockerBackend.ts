/**
 * Plain Docker (no Swarm): one container per session, restarted by the engine
 * if its main process dies. `/tmp` is a tmpfs, so a restarted container has
 * lost the wrapper's files exactly as a rescheduled Swarm task has, and its
 * later `StartedAt` says so.
 */
import type { RunRef, RunSpec } from '../ContainerBackend.js';
import { namespaceFilter, runLabels } from '../namespace.js';
import { SESSION_LABEL } from '../wrapper.js';
import {
  type CurrentContainer,
  DockerRunBackend,
  KEEPALIVE_COMMAND,
  type StartHold,
} from './DockerRunBackend.js';
import { parseStartedAt } from './SwarmBackend.js';

export class DockerBackend extends DockerRunBackend {
  readonly kind = 'docker' as const;

  protected async create(handle: string, spec: RunSpec): Promise<void> {
    await this.createContainer(
      handle,
      spec.image,
      runLabels(this.namespace, spec.sessionId, spec.labels),
    );
  }

  private async createContainer(
    handle: string,
    image: string,
    labels: Record<string, string>,
  ): Promise<void> {
    const container = await this.call(`create container ${handle}`, () =>
      this.docker.createContainer({
        name: handle,
        Image: image,
        Cmd: KEEPALIVE_COMMAND,
        Labels: labels,
        HostConfig: {
          NetworkMode: 'none',
          RestartPolicy: { Name: 'unless-stopped' },
          Tmpfs: { '/tmp': 'rw,exec,mode=1777' },
        },
      }),
    );
    await this.call(`start container ${handle}`, () => container.start());
  }

  protected async currentContainer(handle: string): Promise<CurrentContainer | null> {
    const info = await this.call(`inspect container ${handle}`, (abortSignal) =>
      this.docker.getContainer(handle).inspect({ abortSignal }),
    );
    if (!info.State.Running || info.State.Restarting) return null;
    return { id: info.Id, startedAt: parseStartedAt(info.State.StartedAt) };
  }

  /**
   * The engine's `State.Error` is set when it could not start the container
   * (an OCI runtime error: the image has no `sh`, a bad mount) and cleared by
   * a start that works, so while it is set the spec is refused; the restart
   * policy would only fail again. A container that exits is just not up yet.
   */
  protected async startHold(handle: string): Promise<StartHold | null> {
    const info = await this.call(`inspect container ${handle}`, (abortSignal) =>
      this.docker.getContainer(handle).inspect({ abortSignal }),
    );
    if (info.State.Error) return { refused: true, reason: info.State.Error };
    return { refused: false, reason: `container ${info.State.Status}` };
  }

  protected async destroy(handle: string): Promise<void> {
    await this.call(`remove container ${handle}`, () =>
      this.docker.getContainer(handle).remove({ force: true }),
    );
  }

  protected async list(): Promise<Array<RunRef & { image: string }>> {
    const containers = await this.call('list containers', (abortSignal) =>
      this.docker.listContainers({
        all: true,
        filters: { label: namespaceFilter(this.namespace) },
        abortSignal,
      }),
    );
    return containers.flatMap((c) => {
      const sessionId = c.Labels?.[SESSION_LABEL];
      const handle = c.Names?.[0]?.replace(/^\//, '');
      if (!sessionId || !handle) return [];
      return [{ handle, sessionId, image: c.Image }];
    });
  }

  /** Plain Docker cannot change a container's image: replace it under the same name. */
  protected async repinOne(handle: string, image: string): Promise<void> {
    const info = await this.call(`inspect container ${handle}`, () =>
      this.docker.getContainer(handle).inspect(),
    );
    await this.destroy(handle);
    await this.createContainer(handle, image, info.Config.Labels ?? {});
  }
}
