/**
 * After `cancel` through the rows has cancelled a running attempt: its
 * container, removed from here when this machine can reach the backend the
 * row names, as a node's cancel removes a run no runner of its own holds
 * (src/actors/runtimeCommands.ts). The row decides first; this only cleans
 * up. When it cannot (no container recorded yet, the engine unreachable
 * from here, a simulated run that ended with its node), nothing is lost:
 * every node's Reconciler removes containers no running session owns at
 * its next pass, a booting node at its first.
 */
import type { Session } from '../db/index.js';
import type { CliConfig } from './cliConfig.js';
import { openBackend } from './openBackend.js';

/** What became of the cancelled run's container. */
export type ContainerRemoval =
  | { kind: 'removed'; backend: string; handle: string }
  /** Nothing to remove here: `why` says what the card and the Reconciler make of it. */
  | { kind: 'none'; why: string }
  /** A container to remove that this process could not: a node's pass removes it. */
  | { kind: 'left'; backend: string; handle: string; why: string };

const LEFT_TO_NODES = "a node's next reconcile pass removes it";

export async function removeRunContainer(
  config: CliConfig,
  run: Pick<Session, 'id' | 'backend' | 'handle'>,
): Promise<ContainerRemoval> {
  if (run.handle === null || run.backend === null) {
    return {
      kind: 'none',
      why: `no container recorded yet: its owner stops the run when its feed brings the cancelled row (its heartbeat at the latest), and ${LEFT_TO_NODES} if one is left`,
    };
  }
  if (run.backend === 'simulated') {
    return { kind: 'none', why: 'a simulated run lives and ends with its node' };
  }
  const ref = { sessionId: run.id, handle: run.handle };
  try {
    // The row's backend, not the configured one: the run is where it was started.
    const opened = await openBackend({ ...config, backend: run.backend }, 'the cancelled run');
    try {
      await opened.backend.remove(ref);
    } finally {
      opened.close();
    }
    return { kind: 'removed', backend: run.backend, handle: run.handle };
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return {
      kind: 'left',
      backend: run.backend,
      handle: run.handle,
      why: `${why}; ${LEFT_TO_NODES}`,
    };
  }
}

/**
 * The line `cancel` prints after its own.
 *
 * @example
 * ```ts
 * removalLine({ kind: 'removed', backend: 'swarm', handle: 'rt-ses_1' }) // => 'its container rt-ses_1 (swarm) is removed'
 * removalLine({ kind: 'none', why: 'a simulated run lives and ends with its node' }) // => 'a simulated run lives and ends with its node'
 * ```
 */
export function removalLine(r: ContainerRemoval): string {
  switch (r.kind) {
    case 'removed':
      return `its container ${r.handle} (${r.backend}) is removed`;
    case 'none':
      return r.why;
    case 'left':
      return `its container ${r.handle} (${r.backend}) was not removed from here: ${r.why}`;
  }
}
