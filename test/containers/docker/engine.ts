/**
 * Finds the Docker engine the Docker suites run against, or says why there is
 * none, so the suite's title can carry the reason when it is skipped.
 */
import Docker from 'dockerode';

export const RUNNER_IMAGE = process.env.ROUNDTABLE_RUNNER_IMAGE ?? 'roundtable-runner:latest';

export type Engine = { ok: true; docker: Docker } | { ok: false; reason: string };

function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

export async function detectEngine(options: { swarm: boolean }): Promise<Engine> {
  if (!process.env.DOCKER_HOST) return { ok: false, reason: 'DOCKER_HOST is not set' };
  const docker = new Docker();
  try {
    await within(docker.ping(), 5000, `engine at ${process.env.DOCKER_HOST}`);
    const info = (await within(docker.info(), 5000, 'docker info')) as {
      Swarm?: { LocalNodeState?: string; ControlAvailable?: boolean };
    };
    if (
      options.swarm &&
      !(info.Swarm?.LocalNodeState === 'active' && info.Swarm.ControlAvailable)
    ) {
      return { ok: false, reason: 'the engine is not a Swarm manager (run docker swarm init)' };
    }
    await within(docker.getImage(RUNNER_IMAGE).inspect(), 5000, 'image inspect');
  } catch (error) {
    return {
      ok: false,
      reason: `no usable engine at ${process.env.DOCKER_HOST}: ${String(error)}`,
    };
  }
  return { ok: true, docker };
}
