/**
 * The store half of a readiness probe (`GET /readyz`): `SELECT 1` within a
 * short deadline on the runtime's clock. Probes must not pile up, however
 * often they come (a load balancer per node, a Swarm HEALTHCHECK, a hostile
 * flood: /readyz needs no token). So:
 *
 * - concurrent probes share the one check in flight;
 * - an answer stands for `freshMs`: probes within it ask nothing;
 * - a query past its deadline is reported as `timeout` but stays in flight
 *   until the store (or the pool's own deadlines) ends it, and no other is
 *   started meanwhile: probes hold at most one pooled connection, ever, so
 *   a flood while the store hangs cannot take the pool from the node's work.
 */
import type { StoreCheck } from '../board/readiness.js';
import type { SupervisorClock } from '../supervisor/clock.js';

/** How long the store has to answer a probe's `SELECT 1`. */
export const STORE_PROBE_DEADLINE_MS = 1_000;
/** How long a probe's answer stands for the probes after it. */
export const STORE_PROBE_FRESH_MS = 1_000;

export interface StoreProbeOptions {
  /** The trivial query (src/db/pingStore.ts): resolves once the store answered. */
  query(): Promise<unknown>;
  clock: SupervisorClock;
  deadlineMs?: number;
  freshMs?: number;
}

export class StoreProbe {
  /** The query itself, until it settles (past its deadline too). */
  private query: Promise<void> | undefined;
  /** The check probes wait on, until its answer or its deadline. */
  private pending: Promise<StoreCheck> | undefined;
  private last: { at: number; check: StoreCheck } | undefined;
  private started = 0;
  private readonly deadlineMs: number;
  private readonly freshMs: number;

  constructor(private readonly o: StoreProbeOptions) {
    this.deadlineMs = o.deadlineMs ?? STORE_PROBE_DEADLINE_MS;
    this.freshMs = o.freshMs ?? STORE_PROBE_FRESH_MS;
  }

  /** How many queries the probe has sent (what tests and a flood's bound count). */
  get queries(): number {
    return this.started;
  }

  /** What the store answers now, at most one query at a time. */
  check(): Promise<StoreCheck> {
    const { clock } = this.o;
    const last = this.last;
    if (last !== undefined && clock.now() - last.at < this.freshMs) {
      return Promise.resolve(last.check);
    }
    if (this.pending !== undefined) return this.pending;
    // An earlier query is still out past its deadline: the store has not answered.
    if (this.query !== undefined) return Promise.resolve('timeout');
    this.started += 1;
    let answer: (check: StoreCheck) => void = () => {};
    const pending = new Promise<StoreCheck>((resolve) => {
      answer = resolve;
    });
    const timer = clock.setTimeout(() => answer('timeout'), this.deadlineMs);
    const query = this.o.query().then(
      () => answer('ok'),
      () => answer('unavailable'),
    );
    this.query = query.finally(() => {
      clock.clearTimeout(timer);
      this.query = undefined;
    });
    this.pending = pending.then((check) => {
      this.pending = undefined;
      this.last = { at: clock.now(), check };
      return check;
    });
    return this.pending;
  }
}
