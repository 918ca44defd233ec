/**
 * Picks and opens the container backend: Docker Swarm when a Docker engine
 * is configured (`DOCKER_HOST`, `--docker-host`, `--docker`), otherwise the
 * simulated cluster, so `npm start` works on a laptop with nothing else
 * installed.
 */
import { type Clock, systemClock } from '../containers/Clock.js';
import type { ContainerBackend } from '../containers/ContainerBackend.js';
import { dockerClient } from '../containers/docker/DockerRunBackend.js';
import { SwarmBackend } from '../containers/docker/SwarmBackend.js';
import { defaultCommands } from '../containers/simulated/commands.js';
import { SimulatedBackend } from '../containers/simulated/SimulatedBackend.js';
import { SimulatedCluster } from '../containers/simulated/SimulatedCluster.js';
import type { CliConfig } from './cliConfig.js';
import { CliError } from './exitCodes.js';
import { scaledCommands } from './scaledCommands.js';

export type BackendChoice = 'simulated' | 'swarm';

/**
 * Which backend the configuration asks for.
 *
 * @example
 * ```ts
 * chooseBackend({ backend: 'auto' }) // => 'simulated'
 * chooseBackend({ backend: 'auto', dockerHost: 'unix:///var/run/docker.sock' }) // => 'swarm'
 * chooseBackend({ backend: 'simulated', dockerHost: 'tcp://x:2375' }) // => 'simulated'
 * chooseBackend({ backend: 'swarm' }) // => 'swarm'
 * ```
 */
export function chooseBackend(config: Pick<CliConfig, 'backend' | 'dockerHost'>): BackendChoice {
  if (config.backend !== 'auto') return config.backend;
  return config.dockerHost === undefined ? 'simulated' : 'swarm';
}

export interface OpenedBackend {
  backend: ContainerBackend;
  /**
   * Ends what the backend keeps running in this process: the simulated
   * cluster's machines live here, and their pending timers would otherwise
   * hold a stopped node open. Swarm's runs live elsewhere: nothing to do.
   */
  close(): void;
  /** The simulated cluster, when that is the backend (the demo reschedules on it). */
  cluster: SimulatedCluster | null;
  /** For the banner: "simulated cluster (2 machines)", "Docker Swarm at ...". */
  description: string;
}

const ENGINE_CHECK_MS = 10_000;

/** Opens the backend; for Swarm, checks the engine answers and is a swarm manager first. */
export async function openBackend(config: CliConfig): Promise<OpenedBackend> {
  if (chooseBackend(config) === 'simulated') {
    const nodes = Array.from({ length: config.simulated.nodes }, (_, i) => `sim-${i + 1}`);
    const clock = trackedClock();
    const cluster = new SimulatedCluster({
      clock,
      nodes,
      rescheduleDelayMs: config.simulated.rescheduleDelayMs,
      commands: scaledCommands(defaultCommands, config.simulated.speed),
    });
    const speed = config.simulated.speed === 1 ? '' : `, ${config.simulated.speed}x speed`;
    return {
      backend: new SimulatedBackend(cluster, { namespace: config.namespace }),
      cluster,
      close: () => clock.clearAll(),
      description: `simulated cluster (${nodes.length} machines${speed})`,
    };
  }
  const where = config.dockerHost ?? 'the default Docker socket';
  const docker = dockerClient(config.dockerHost);
  let info: { Swarm?: { LocalNodeState?: string; ControlAvailable?: boolean } };
  try {
    info = await withTimeout(
      docker.info(),
      ENGINE_CHECK_MS,
      `no answer from ${where} in ${ENGINE_CHECK_MS} ms`,
    );
  } catch (error) {
    throw new CliError(
      'CLI_NODE',
      `cannot reach the Docker engine at ${where}: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  if (info.Swarm?.LocalNodeState !== 'active' || info.Swarm.ControlAvailable !== true) {
    throw new CliError(
      'CLI_NODE',
      `the Docker engine at ${where} is not a swarm manager; run \`docker swarm init\` there, or use --backend simulated`,
    );
  }
  return {
    backend: new SwarmBackend({ docker, namespace: config.namespace }),
    cluster: null,
    close: () => {},
    description: `Docker Swarm at ${where}, namespace ${config.namespace}`,
  };
}

/** The system clock, remembering its pending timers so they can all be cleared at once. */
export function trackedClock(): Clock & { clearAll(): void; pending(): number } {
  const timers = new Set<ReturnType<typeof setTimeout>>();
  return {
    now: () => systemClock.now(),
    setTimeout(fn, ms) {
      const handle = setTimeout(() => {
        timers.delete(handle);
        fn();
      }, ms);
      timers.add(handle);
      return handle;
    },
    clearTimeout(id) {
      timers.delete(id as ReturnType<typeof setTimeout>);
      clearTimeout(id as ReturnType<typeof setTimeout>);
    },
    clearAll() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
    },
    pending: () => timers.size,
  };
}

function withTimeout<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
