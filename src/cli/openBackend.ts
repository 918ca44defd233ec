/**
 * Opens the container backend the configuration names, or, for `auto`, the
 * one the Docker engine's answer points to (`backendChoice.ts`): Swarm, plain
 * Docker, or local processes under the data directory. The simulated
 * cluster only when named (the demo names it).
 */
import { userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import type Docker from 'dockerode';
import { type Clock, systemClock } from '../containers/Clock.js';
import type { ContainerBackend } from '../containers/ContainerBackend.js';
import { DockerBackend } from '../containers/docker/DockerBackend.js';
import { dockerClient } from '../containers/docker/DockerRunBackend.js';
import { SwarmBackend } from '../containers/docker/SwarmBackend.js';
import { LocalBackend } from '../containers/local/LocalBackend.js';
import { defaultCommands } from '../containers/simulated/commands.js';
import { SimulatedBackend } from '../containers/simulated/SimulatedBackend.js';
import { SimulatedCluster } from '../containers/simulated/SimulatedCluster.js';
import {
  type BackendDecision,
  decideBackend,
  type EngineProbe,
  swarmRole,
} from './backendChoice.js';
import type { CliConfig } from './cliConfig.js';
import { CliError } from './exitCodes.js';
import { scaledCommands } from './scaledCommands.js';

export type { BackendDecision, BackendName } from './backendChoice.js';

export interface OpenedBackend {
  backend: ContainerBackend;
  /**
   * Ends what the backend keeps running in this process: the simulated
   * cluster's machines live here, and their pending timers would otherwise
   * hold a stopped node open; the local backend stops following output.
   * Runs on Swarm, Docker or local processes go on.
   */
  close(): void;
  /** The simulated cluster, when that is the backend (the demo reschedules on it). */
  cluster: SimulatedCluster | null;
  /** For the banner: "simulated cluster (2 machines)", "Docker Swarm at ...". */
  description: string;
  /** Which backend and why (the banner and `/healthz` say it). */
  decision: BackendDecision;
}

/** How long a named Docker backend's engine may take to answer `start`. */
const ENGINE_CHECK_MS = 10_000;
/** How long `auto` waits for an engine before it runs local processes instead. */
const ENGINE_PROBE_MS = 3_000;

const DEFAULT_DOCKER_SOCKET = 'unix:///var/run/docker.sock';

type DockerInfo = { Swarm?: { LocalNodeState?: string; ControlAvailable?: boolean } };

/**
 * Where runs of the local backend keep their files: in the data directory,
 * so they survive the node like its store does.
 *
 * @example
 * ```ts
 * localRunsDir({ dataDir: '/srv/rt' }) // => '/srv/rt/runs'
 * ```
 */
export function localRunsDir(config: Pick<CliConfig, 'dataDir'>): string {
  return resolve(join(config.dataDir, 'runs'));
}

/** Opens the backend; for Docker and Swarm, checks the engine answers (and is a manager) first. */
export async function openBackend(
  config: CliConfig,
  origin: string = 'the configuration',
): Promise<OpenedBackend> {
  // Explicit: dockerode would otherwise read DOCKER_HOST from the process, not from the configuration.
  const where = config.dockerHost ?? DEFAULT_DOCKER_SOCKET;
  const docker = dockerClient(where);
  let probe: EngineProbe | null = null;
  if (config.backend === 'auto') probe = await probeEngine(docker, ENGINE_PROBE_MS);
  const decision = decideBackend(config.backend, origin, where, probe);
  switch (decision.name) {
    case 'simulated':
      return openSimulated(config, decision);
    case 'local': {
      const dir = localRunsDir(config);
      const backend = new LocalBackend({ baseDir: dir, namespace: config.namespace });
      return {
        backend,
        cluster: null,
        close: () => backend.close(),
        description: `local processes as OS user ${userInfo().username} (files in ${dir})`,
        decision,
      };
    }
    case 'docker':
    case 'swarm': {
      const engine = probe ?? (await probeEngine(docker, ENGINE_CHECK_MS));
      if (!engine.answered) {
        throw new CliError(
          'CLI_NODE',
          `cannot reach the Docker engine at ${where}: ${engine.error}`,
        );
      }
      if (decision.name === 'docker') {
        return {
          backend: new DockerBackend({ docker, namespace: config.namespace }),
          cluster: null,
          close: () => {},
          description: `Docker at ${where}, namespace ${config.namespace}`,
          decision,
        };
      }
      if (engine.swarm !== 'manager') {
        throw new CliError(
          'CLI_NODE',
          `the Docker engine at ${where} is not a swarm manager; run \`docker swarm init\` there, or use --backend docker`,
        );
      }
      return {
        backend: new SwarmBackend({ docker, namespace: config.namespace }),
        cluster: null,
        close: () => {},
        description: `Docker Swarm at ${where}, namespace ${config.namespace}`,
        decision,
      };
    }
  }
}

/** `docker info` within `ms`: an answer, or why there was none. */
async function probeEngine(docker: Docker, ms: number): Promise<EngineProbe> {
  try {
    const info = (await withTimeout(docker.info(), ms, `no answer in ${ms} ms`)) as DockerInfo;
    return { answered: true, swarm: swarmRole(info) };
  } catch (error) {
    return { answered: false, error: (error as Error).message };
  }
}

function openSimulated(config: CliConfig, decision: BackendDecision): OpenedBackend {
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
    description: `simulated cluster (${nodes.length} machines${speed}): commands are scripted, not run`,
    decision,
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
