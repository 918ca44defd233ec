/**
 * Which backend a node runs on, and why, in words for the banner and
 * `/healthz`. Named (`--backend`, `ROUNDTABLE_BACKEND`, the config file) it
 * is that one; `auto` asks the Docker engine: a Swarm manager means Swarm,
 * any other engine that answers means plain Docker, no answer means local
 * processes. The simulated cluster is never chosen on its own: it fakes the
 * commands, so it runs only when named (the demo names it).
 *
 * Pure: the caller probes the engine.
 */

export type BackendName = 'local' | 'docker' | 'swarm' | 'simulated';

/** What the engine said when asked (`docker info`), or why it did not answer. */
export type EngineProbe =
  | { answered: true; swarm: 'manager' | 'worker' | 'inactive' }
  | { answered: false; error: string };

export interface BackendDecision {
  name: BackendName;
  /** One line: what chose it. */
  reason: string;
}

/**
 * @example
 * ```ts
 * decideBackend('auto', 'default', 'unix:///run/docker.sock', { answered: true, swarm: 'manager' }) // => { name: 'swarm', reason: 'auto: the Docker engine at unix:///run/docker.sock is a Swarm manager' }
 * decideBackend('auto', 'default', 'unix:///var/run/docker.sock', { answered: true, swarm: 'inactive' }).name // => 'docker'
 * decideBackend('auto', 'default', 'x', { answered: true, swarm: 'worker' }).reason // => 'auto: the Docker engine at x answers, as a Swarm worker (services need a manager): plain Docker'
 * decideBackend('auto', 'default', 'unix:///var/run/docker.sock', { answered: false, error: 'connect ENOENT /var/run/docker.sock' }) // => { name: 'local', reason: 'auto: no Docker engine answered at unix:///var/run/docker.sock (connect ENOENT /var/run/docker.sock): local processes' }
 * decideBackend('simulated', 'ROUNDTABLE_BACKEND', 'x', null) // => { name: 'simulated', reason: 'simulated, as ROUNDTABLE_BACKEND says' }
 * decideBackend('local', '--backend', 'x', { answered: true, swarm: 'manager' }).name // => 'local'
 * decideBackend('auto', 'default', 'x', null) // throws Error
 * ```
 */
export function decideBackend(
  asked: 'auto' | BackendName,
  origin: string,
  where: string,
  engine: EngineProbe | null,
): BackendDecision {
  if (asked !== 'auto') return { name: asked, reason: `${asked}, as ${origin} says` };
  if (engine === null) throw new Error('decideBackend: auto needs an engine probe');
  if (!engine.answered) {
    return {
      name: 'local',
      reason: `auto: no Docker engine answered at ${where} (${engine.error}): local processes`,
    };
  }
  if (engine.swarm === 'manager') {
    return { name: 'swarm', reason: `auto: the Docker engine at ${where} is a Swarm manager` };
  }
  const as =
    engine.swarm === 'worker' ? ', as a Swarm worker (services need a manager)' : ', outside Swarm';
  return {
    name: 'docker',
    reason: `auto: the Docker engine at ${where} answers${as}: plain Docker`,
  };
}

/**
 * What a Docker `info` answer says about Swarm.
 *
 * @example
 * ```ts
 * swarmRole({ Swarm: { LocalNodeState: 'active', ControlAvailable: true } }) // => 'manager'
 * swarmRole({ Swarm: { LocalNodeState: 'active', ControlAvailable: false } }) // => 'worker'
 * swarmRole({ Swarm: { LocalNodeState: 'inactive' } }) // => 'inactive'
 * swarmRole({}) // => 'inactive'
 * ```
 */
export function swarmRole(info: {
  Swarm?: { LocalNodeState?: string; ControlAvailable?: boolean };
}): 'manager' | 'worker' | 'inactive' {
  if (info.Swarm?.LocalNodeState !== 'active') return 'inactive';
  return info.Swarm.ControlAvailable === true ? 'manager' : 'worker';
}
