/**
 * Starts one incarnation of a child and owns its stop protocol. The
 * supervisor decides; this file talks to XState.
 *
 * A supervisor holds thousands of these, so an incarnation is one object
 * whose prototype methods do the work: it is itself the observer it
 * subscribes to its actor with, and it tells its supervisor of an exit
 * through one shared sink plus a token, not per-child closures.
 */
import type { AnyActorRef } from 'xstate';
import { createActor } from 'xstate';
import type { ResolvedChildSpec } from './childSpec.js';
import { SHUTDOWN_EVENT } from './events.js';
import type { ExitReason } from './exitReason.js';
import { InspectionGate } from './inspectionGate.js';
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

/** Where a running incarnation reports its own exit; `token` names the child. */
export interface ExitSink<T> {
  childExited(token: T, spawned: Spawned, reason: ExitReason): void;
}

/** One running incarnation of a child: a worker's actor or a nested supervisor. */
export type Spawned = SpawnedWorker | SpawnedSupervisor;

export interface SpawnedWorker extends Incarnated {
  readonly type: 'worker';
  readonly ref: AnyActorRef;
}

export interface SpawnedSupervisor extends Incarnated {
  readonly type: 'supervisor';
  readonly ref: NestedSupervisor;
}

/** What every incarnation offers, whatever runs in it. */
interface Incarnated {
  readonly sessionId: string;
  readonly startedAt: number;
  /** `undefined` while running. */
  readonly reason: ExitReason | undefined;
  /**
   * Asks for a graceful stop. Returns true when the child is now winding down
   * (await `whenExited`), false when it already exited. The supervisor calls
   * this only once it has let go of the incarnation, so from here on the exit
   * goes to `whenExited`, not to the sink.
   */
  requestStop(): boolean;
  /** Stops at once with reason `killed`; like requestStop, lets go first. */
  kill(): void;
  whenExited(): Promise<ExitReason>;
}

export type SpawnResult = { ok: true; spawned: Spawned } | { ok: false; reason: ExitReason };

abstract class Incarnation<T, R extends AnyActorRef | NestedSupervisor> implements Incarnated {
  reason: ExitReason | undefined;
  starting = true;
  private graceful = false;
  /** Set once the supervisor stopped it: its exit is no news to the sink. */
  private released = false;
  private waiters: ((r: ExitReason) => void)[] | undefined;

  constructor(
    readonly ref: R,
    readonly sessionId: string,
    readonly startedAt: number,
    private readonly sink: ExitSink<T>,
    private readonly token: T,
  ) {}

  /** Itself, as the member of `Spawned` it is (the subclass knows which). */
  protected abstract spawned(): Spawned;
  protected abstract stopNow(reason: 'shutdown' | 'killed'): void;
  /** Sends the shutdown request; false when the child would not handle it. */
  protected abstract askToStop(): boolean;

  finish(reason: ExitReason): void {
    if (this.reason !== undefined) return;
    // A child that honoured our shutdown request and ended "normally" ended
    // because we asked: that is OTP's `shutdown`.
    this.reason = this.graceful && reason === 'normal' ? 'shutdown' : reason;
    // `killed` is what every watcher reads off an unrecorded stopped actor
    // anyway; not recording it keeps brutal kills out of the WeakMap.
    if (this.reason !== 'killed') recordExitReason(this.ref, this.reason);
    if (this.waiters) for (const w of this.waiters) w(this.reason);
    this.waiters = undefined;
    if (!this.starting) this.report();
  }

  /** Tells the sink, unless the supervisor has let go meanwhile. */
  report(): void {
    if (!this.released && this.reason !== undefined)
      this.sink.childExited(this.token, this.spawned(), this.reason);
  }

  requestStop(): boolean {
    this.released = true;
    if (this.reason !== undefined) return false;
    this.graceful = true;
    if (!this.askToStop()) this.stopNow('shutdown');
    return this.reason === undefined;
  }

  kill(): void {
    this.released = true;
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

class SupervisorIncarnation<T>
  extends Incarnation<T, NestedSupervisor>
  implements SpawnedSupervisor
{
  readonly type = 'supervisor';
  constructor(
    private readonly sup: NestedSupervisor,
    startedAt: number,
    sink: ExitSink<T>,
    token: T,
  ) {
    super(sup, sup.sessionId, startedAt, sink, token);
  }

  protected spawned(): Spawned {
    return this;
  }

  protected stopNow(): void {
    this.sup.kill();
  }

  protected askToStop(): boolean {
    void this.sup.shutdown();
    return true;
  }
}

/**
 * An XState actor's incarnation, and the observer of that actor: `error`
 * catches every failure (so XState never rethrows at the root) and
 * `complete` follows both a done snapshot and a stop.
 */
class ActorIncarnation<T> extends Incarnation<T, AnyActorRef> implements SpawnedWorker {
  readonly type = 'worker';
  constructor(
    private readonly actor: AnyActorRef,
    startedAt: number,
    sink: ExitSink<T>,
    token: T,
    private readonly gate: InspectionGate | undefined,
  ) {
    super(actor, actor.sessionId, startedAt, sink, token);
  }

  protected spawned(): Spawned {
    return this;
  }

  error(error: unknown): void {
    this.gate?.untrack(this.actor);
    this.finish({ error });
  }

  complete(): void {
    this.gate?.untrack(this.actor);
    this.finish(exitReasonOf(this.actor) ?? 'killed');
  }

  protected stopNow(reason: 'shutdown' | 'killed'): void {
    if (reason !== 'killed') recordExitReason(this.actor, reason);
    this.actor.stop();
  }

  protected askToStop(): boolean {
    if (!handlesShutdown(this.actor)) return false;
    this.actor.send(SHUTDOWN_EVENT);
    return true;
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

function spawnNested<T>(
  spec: ResolvedChildSpec & { start: { supervisor: SupervisorSpec } },
  runtime: SupervisorRuntime,
  nested: NestedFactory,
  sink: ExitSink<T>,
  token: T,
): SpawnResult {
  const now = runtime.clock.now();
  let sup: NestedSupervisor;
  try {
    sup = nested({ id: spec.id, ...spec.start.supervisor }, runtime);
  } catch (error) {
    return { ok: false, reason: { error } };
  }
  const inc = new SupervisorIncarnation(sup, now, sink, token);
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

/**
 * Starts `spec` with `input`. A child whose start already failed (initial
 * action threw, promise rejected synchronously) is a failed start, not an
 * exit. Later exits go to `sink.childExited(token, ...)`.
 */
export function spawnChild<T>(
  spec: ResolvedChildSpec,
  input: unknown,
  runtime: SupervisorRuntime,
  nested: NestedFactory,
  sink: ExitSink<T>,
  token: T,
): SpawnResult {
  if ('supervisor' in spec.start) {
    return spawnNested(
      spec as ResolvedChildSpec & { start: { supervisor: SupervisorSpec } },
      runtime,
      nested,
      sink,
      token,
    );
  }
  const now = runtime.clock.now();
  const gate = runtime.inspect instanceof InspectionGate ? runtime.inspect : undefined;
  const inspect = runtime.inspect instanceof InspectionGate ? undefined : runtime.inspect;
  // XState reads a missing input and `input: undefined` alike; leaving the
  // key out keeps the actor's options object small.
  const actor = createActor(spec.start.logic, {
    id: spec.id,
    clock: runtime.clock,
    ...(input !== undefined ? { input } : {}),
    ...(inspect ? { inspect } : {}),
  });
  const inc = new ActorIncarnation(actor, now, sink, token, gate);
  actor.subscribe(inc);
  gate?.track(actor);
  try {
    actor.start();
    gate?.started(actor);
  } catch (error) {
    inc.error(error);
  }
  if (inc.reason !== undefined && typeof inc.reason === 'object' && 'error' in inc.reason) {
    return { ok: false, reason: inc.reason };
  }
  inc.starting = false;
  // Done during start (a final initial state): a real, immediate exit.
  if (inc.reason !== undefined) queueMicrotask(() => inc.report());
  return { ok: true, spawned: inc };
}
