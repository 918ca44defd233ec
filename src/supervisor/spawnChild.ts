/**
 * Starts one incarnation of a child and owns its stop protocol. The
 * supervisor decides; this file talks to XState.
 */
import { type AnyActorRef, createActor } from 'xstate';
import type { ResolvedChildSpec } from './childSpec.js';
import { SHUTDOWN_EVENT } from './events.js';
import type { ExitReason } from './exitReason.js';
import type { SupervisorRuntime, SupervisorSpec } from './supervisorSpec.js';
import { type ExitSource, exitReasonOf, recordExitReason } from './watchExit.js';

/** What spawnChild needs of a nested supervisor (the Supervisor class). */
export interface NestedSupervisor extends ExitSource {
  readonly sessionId: string;
  /** @internal starts the children; on failure the caller must not use it. */
  startInitial(): { ok: true } | { ok: false; childId: string; reason: ExitReason };
  shutdown(): Promise<void>;
  kill(): void;
}

export type NestedFactory = (spec: SupervisorSpec, runtime: SupervisorRuntime) => NestedSupervisor;

/** One running incarnation of a child. */
export interface Spawned {
  readonly ref: AnyActorRef | NestedSupervisor;
  readonly sessionId: string;
  readonly startedAt: number;
  /** `undefined` while running. */
  readonly reason: ExitReason | undefined;
  /**
   * Asks for a graceful stop. Returns true when the child is now winding down
   * (await `whenExited`), false when it already exited.
   */
  requestStop(): boolean;
  /** Stops at once with reason `killed`. */
  kill(): void;
  whenExited(): Promise<ExitReason>;
}

export type SpawnResult = { ok: true; spawned: Spawned } | { ok: false; reason: ExitReason };

class Incarnation implements Spawned {
  reason: ExitReason | undefined;
  starting = true;
  graceful = false;
  private waiters: ((r: ExitReason) => void)[] | undefined;
  constructor(
    readonly ref: AnyActorRef | NestedSupervisor,
    readonly sessionId: string,
    readonly startedAt: number,
    private readonly onExit: (spawned: Spawned, reason: ExitReason) => void,
    private readonly stopNow: (reason: 'shutdown' | 'killed') => void,
    private readonly askToStop: () => boolean,
  ) {}

  finish(reason: ExitReason): void {
    if (this.reason !== undefined) return;
    // A child that honoured our shutdown request and ended "normally" ended
    // because we asked: that is OTP's `shutdown`.
    this.reason = this.graceful && reason === 'normal' ? 'shutdown' : reason;
    recordExitReason(this.ref, this.reason);
    for (const w of this.waiters ?? []) w(this.reason);
    this.waiters = undefined;
    if (!this.starting) this.onExit(this, this.reason);
  }

  requestStop(): boolean {
    if (this.reason !== undefined) return false;
    this.graceful = true;
    if (!this.askToStop()) this.stopNow('shutdown');
    return this.reason === undefined;
  }

  kill(): void {
    if (this.reason === undefined) this.stopNow('killed');
  }

  whenExited(): Promise<ExitReason> {
    if (this.reason !== undefined) return Promise.resolve(this.reason);
    return new Promise((resolve) => {
      this.waiters ??= [];
      this.waiters.push(resolve);
    });
  }
}

function handlesShutdown(actor: AnyActorRef): boolean {
  const snap = actor.getSnapshot() as { can?: (e: typeof SHUTDOWN_EVENT) => boolean };
  if (typeof snap.can !== 'function') return false;
  try {
    return snap.can(SHUTDOWN_EVENT);
  } catch {
    // A guard that throws while we only ask "could you?" must not block the
    // shutdown: treat the child as one that does not trap it.
    return false;
  }
}

/**
 * Starts `spec` with `input`. A child whose start already failed (initial
 * action threw, promise rejected synchronously) is a failed start, not an exit.
 */
export function spawnChild(
  spec: ResolvedChildSpec,
  input: unknown,
  runtime: SupervisorRuntime,
  nested: NestedFactory,
  onExit: (spawned: Spawned, reason: ExitReason) => void,
): SpawnResult {
  const now = runtime.clock.now();
  if ('supervisor' in spec.start) {
    let sup: NestedSupervisor;
    try {
      sup = nested({ id: spec.id, ...spec.start.supervisor }, runtime);
    } catch (error) {
      return { ok: false, reason: { error } };
    }
    const inc: Incarnation = new Incarnation(
      sup,
      sup.sessionId,
      now,
      onExit,
      () => sup.kill(),
      () => {
        void sup.shutdown();
        return true;
      },
    );
    sup.onExit((r) => inc.finish(r));
    let started: ReturnType<NestedSupervisor['startInitial']>;
    try {
      started = sup.startInitial();
    } catch (error) {
      return { ok: false, reason: { error } };
    }
    if (!started.ok) return { ok: false, reason: { shutdown: { failedToStart: started.childId } } };
    inc.starting = false;
    return { ok: true, spawned: inc };
  }

  const actor = createActor(spec.start.logic, {
    id: spec.id,
    input,
    clock: runtime.clock,
    ...(runtime.inspect ? { inspect: runtime.inspect } : {}),
  });
  const inc: Incarnation = new Incarnation(
    actor,
    actor.sessionId,
    now,
    onExit,
    (reason) => {
      recordExitReason(actor, reason);
      actor.stop();
    },
    () => {
      if (!handlesShutdown(actor)) return false;
      actor.send(SHUTDOWN_EVENT);
      return true;
    },
  );
  actor.subscribe({
    next: (snap: { status: string }) => {
      if (snap.status === 'done') inc.finish(exitReasonOf(actor) ?? 'normal');
    },
    error: (error: unknown) => inc.finish({ error }),
    complete: () => inc.finish(exitReasonOf(actor) ?? 'killed'),
  });
  try {
    actor.start();
  } catch (error) {
    inc.finish({ error });
  }
  if (inc.reason !== undefined && typeof inc.reason === 'object' && 'error' in inc.reason) {
    return { ok: false, reason: inc.reason };
  }
  inc.starting = false;
  if (inc.reason !== undefined) {
    // Done during start (a final initial state): a real, immediate exit.
    const reason = inc.reason;
    queueMicrotask(() => onExit(inc, reason));
  }
  return { ok: true, spawned: inc };
}
