/**
 * What the simulated engine keeps: services (one per session), their
 * containers with start times and their own `/tmp`, and the log of every
 * exec. Plain records: the cluster (SimulatedCluster.ts) changes them, the
 * exec (execWrapper.ts) writes into a container's `/tmp`.
 */

export interface SimContainer {
  id: string;
  node: string;
  startedAt: number;
  image: string;
  /** The container's `/tmp`: file path to contents. */
  tmp: Map<string, string>;
}

export interface SimService {
  name: string;
  sessionId: string;
  image: string;
  env: Readonly<Record<string, string>>;
  labels: Readonly<Record<string, string>>;
  /** Null between a container's death and its replacement, or while its image is refused. */
  container: SimContainer | null;
  /** Why the engine will not run the service's task (an image refused by `rejectImage`). */
  taskError: string | null;
}

/** One exec the cluster ran, kept so tests can prove nothing ran twice. */
export interface ExecRecord {
  sessionId: string;
  containerId: string;
  node: string;
  atMs: number;
  command: readonly string[];
}
