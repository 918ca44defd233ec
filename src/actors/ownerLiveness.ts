/**
 * Who else is alive: the port the Reconciler asks before it adopts or fails
 * a running row whose owner is not this boot (docs/runtime.md, "Owner liveness and fencing").
 * Its own file so that the Reconciler's steps and the heartbeat can import
 * it without the runtime's public types (which import their reports).
 */

/** Decides whether the owner written on a running row is still alive. */
export interface OwnerLiveness {
  isAlive(owner: string): Promise<boolean>;
}
