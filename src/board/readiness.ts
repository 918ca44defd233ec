/**
 * Whether a node is ready for work, as `GET /readyz` answers a load balancer
 * or a Swarm HEALTHCHECK: liveness (`/healthz`) says the process answers,
 * readiness that it is worth sending work to. Each reason a node is not
 * ready is a stable code, so a probe's log says which one.
 */

/** Why a node is not ready, one code each. */
export const READINESS_REASONS = [
  /** The Reconciler's boot pass has not run yet (`runtime.booted`). */
  'not_booted',
  /** Its boot lock is lost or busy: it takes no grants (`/healthz`'s `takingGrants: false`). */
  'not_taking_grants',
  /** The store refused or failed the trivial query. */
  'store_unavailable',
  /** The store did not answer the trivial query within the probe's deadline. */
  'store_timeout',
  /** The node is stopping (a SIGTERM, `runtime.stop()`, or its tree gave up). */
  'stopping',
] as const;

export type ReadinessReason = (typeof READINESS_REASONS)[number];

/** What the store's trivial query found: answered, failed, or past its deadline. */
export type StoreCheck = 'ok' | 'unavailable' | 'timeout';

export interface ReadinessInput {
  booted: boolean;
  takingGrants: boolean;
  /** Undefined when not asked (a stopping node does not ask a store it is closing). */
  store: StoreCheck | undefined;
  stopping: boolean;
}

/** A node's readiness: ready, or every reason it is not (in `READINESS_REASONS` order). */
export interface Readiness {
  ready: boolean;
  reasons: ReadinessReason[];
}

/**
 * The verdict: ready when booted, taking grants, the store answered and not
 * stopping; otherwise every reason that fails.
 *
 * @example
 * ```ts
 * readinessOf({ booted: true, takingGrants: true, store: 'ok', stopping: false }) // => { ready: true, reasons: [] }
 * readinessOf({ booted: false, takingGrants: true, store: 'ok', stopping: false }) // => { ready: false, reasons: ['not_booted'] }
 * readinessOf({ booted: true, takingGrants: false, store: 'timeout', stopping: false }) // => { ready: false, reasons: ['not_taking_grants', 'store_timeout'] }
 * readinessOf({ booted: true, takingGrants: true, store: 'unavailable', stopping: false }).reasons // => ['store_unavailable']
 * readinessOf({ booted: true, takingGrants: true, store: undefined, stopping: true }) // => { ready: false, reasons: ['stopping'] }
 * ```
 */
export function readinessOf(input: ReadinessInput): Readiness {
  const reasons: ReadinessReason[] = [];
  if (!input.booted) reasons.push('not_booted');
  if (!input.takingGrants) reasons.push('not_taking_grants');
  if (input.store === 'unavailable') reasons.push('store_unavailable');
  if (input.store === 'timeout') reasons.push('store_timeout');
  if (input.stopping) reasons.push('stopping');
  return { ready: reasons.length === 0, reasons };
}
