/**
 * The node's view of its container engine. A start that fails because the
 * engine is unreachable (or did not answer in time) closes the gate: the
 * node takes no grants while it is closed, so queued sessions stay queued
 * instead of failing one by one, and a probe (`backend.ping()`) retries with
 * a capped backoff until the engine answers, then opens it again. What a
 * failed start means for its session is the pure policy's decision
 * (src/machines/startFailurePolicy.ts).
 */

import { backoffDelay } from '../common/backoff.js';
import type { ContainerBackend } from '../containers/ContainerBackend.js';
import { isContainerError } from '../containers/ContainerError.js';
import type { Session } from '../db/rows.js';
import type { ContainerRunError } from '../machines/containerRunTypes.js';
import { START_FAILURE_DEFAULTS, startFailureAction } from '../machines/startFailurePolicy.js';
import type { SupervisorClock } from '../supervisor/clock.js';
import { engineCodeOf, type StartFailure } from './taskRunner.js';

export interface EngineGateOptions {
  backend: ContainerBackend;
  clock: SupervisorClock;
  /** The gate opened again. */
  onChange(): void;
  onError(error: unknown): void;
  track<T>(work: Promise<T>): Promise<T>;
  probe?: { baseMs: number; maxMs: number };
}

export class EngineGate {
  private down: { since: number; code: string; message: string } | null = null;
  /** The gate stays closed until at least this time (the policy's retry delay). */
  private holdUntil = 0;
  private probes = 0;
  private timer: unknown = null;
  private stopped = false;

  constructor(private readonly o: EngineGateOptions) {}

  available(): boolean {
    return this.down === null;
  }

  /** Why the engine is unavailable, or null. */
  problem(): { since: number; code: string; message: string } | null {
    return this.down;
  }

  /** Decides a failed start; an unreachable engine also closes the gate. */
  startFailed(error: ContainerRunError, session: Session): StartFailure {
    const code = engineCodeOf(error);
    // The engine's own words ("No such image: x") are on the backend's
    // error under the run's; the run's message only says which step failed.
    const cause = (error as { cause?: unknown }).cause;
    const message = isContainerError(cause) ? cause.message : error.message;
    const decided = startFailureAction({
      code: code ?? 'engine',
      message,
      attempt: session.attempt,
      ...START_FAILURE_DEFAULTS,
    });
    if (code === 'unavailable' || code === 'timeout')
      this.close(code, message, decided.action === 'retry_later' ? decided.delayMs : 0);
    return decided.action === 'fail'
      ? { action: 'fail', reason: decided.reason, userRecoverable: decided.userRecoverable }
      : { action: 'requeue', reason: decided.reason };
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) this.o.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  private close(code: string, message: string, holdMs: number): void {
    if (this.stopped) return;
    const now = this.o.clock.now();
    this.holdUntil = Math.max(this.holdUntil, now + holdMs);
    if (this.down !== null) return;
    this.down = { since: now, code, message };
    this.probes = 0;
    this.arm();
  }

  private arm(): void {
    if (this.stopped) return;
    const p = this.o.probe ?? { baseMs: 500, maxMs: 5_000 };
    const backoff = backoffDelay(this.probes, { minMs: p.baseMs, maxMs: p.maxMs });
    const delay = Math.max(backoff, this.holdUntil - this.o.clock.now());
    this.timer = this.o.clock.setTimeout(() => {
      this.timer = null;
      this.probes += 1;
      // From a promise, not called here: a backend whose ping throws instead of
      // rejecting is reported and probed again, not thrown out of the timer.
      void this.o.track(Promise.resolve().then(() => this.o.backend.ping())).then(
        (r) => {
          if (this.stopped) return;
          // A start failed meanwhile and the policy wants a longer wait: wait it out.
          if (r.ok && this.o.clock.now() >= this.holdUntil) {
            this.down = null;
            this.o.onChange();
          } else this.arm();
        },
        (error: unknown) => {
          this.o.onError(error);
          this.arm();
        },
      );
    }, delay);
  }
}
