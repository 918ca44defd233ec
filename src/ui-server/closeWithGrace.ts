/**
 * How a server closes its WebSockets, the board's and the standalone
 * inspector's alike: each group sends its close frames now, and the sockets
 * that have not answered by `graceMs` are cut. ws itself waits 30 s for each
 * answer, and a listener's close waits for every socket it accepted,
 * upgraded ones included: a client that never answers (a laptop asleep, a
 * cut network, a hostile client) would hold a node's stop until its
 * shutdown deadline ended the process.
 */

/** Sockets closed together: close frames first, then a cut for those still open. */
export interface SocketGroup {
  /** Refuses new sockets and sends the open ones their close frame. */
  close(): void;
  /** Cuts the sockets still open. */
  terminate(): void;
}

/** The timer the grace runs on: the server's injected clock. */
export interface GraceClock {
  setTimeout(fn: () => void, ms: number): unknown;
}

/**
 * Closes every group now and cuts, `graceMs` later, what is left of them.
 *
 * @example
 * ```ts
 * closeWithGrace([hub, inspectorRoutes], clock, limits.closeGraceMs);
 * ```
 */
export function closeWithGrace(
  groups: readonly SocketGroup[],
  clock: GraceClock,
  graceMs: number,
): void {
  for (const group of groups) group.close();
  clock.setTimeout(() => {
    for (const group of groups) group.terminate();
  }, graceMs);
}
