/**
 * The supervisor: a runtime shell that starts XState actors from child specs,
 * turns every way they can end into an exit reason, and restarts them by
 * OTP's rules. Its jobs (exits, startChild, shutdown) go through a Mailbox;
 * what happens after an exit is the RestartHandler's; stopping one child by
 * its shutdown spec is stopChild's; telling listeners, guarded so that a
 * throwing subscriber cannot stop a restart, is SupervisorOutbox's.
 */
import type { ActorRefFrom, AnyActorLogic, AnyActorRef } from 'xstate';
import {
  type ChildCounts,
  type ChildRecord,
  type ChildStatus,
  ChildTable,
  type ChildInfo as TableRow,
} from './ChildTable.js';
import { claimName, releaseNames } from './childNames.js';
import { type ChildSpec, type ResolvedChildSpec, validateChildSpec } from './childSpec.js';
import {
  AlreadyStartedError,
  ChildSpecError,
  ChildStartError,
  ChildTypeError,
  MaxChildrenError,
  NoProcError,
  NotFoundError,
  SupervisorJobError,
} from './errors.js';
import type { SupervisorEvent } from './events.js';
import { type ExitSignal, exitOneChild, registerShell } from './exitChild.js';
import type { ExitReason } from './exitReason.js';
import { fromTemplate, type StartArgs } from './fromTemplate.js';
import { shellObserver } from './inspectionGate.js';
import { inspectionShell } from './inspectionShell.js';
import { Mailbox } from './Mailbox.js';
import { noteInspected } from './monitorInspection.js';
import { RestartHandler } from './RestartHandler.js';
import { SupervisorOutbox } from './SupervisorOutbox.js';
import {
  type ExitSink,
  type NestedFactory,
  type NestedSupervisor,
  type Spawned,
  spawnChild,
} from './spawnChild.js';
import { killChild, stopChild } from './stopChild.js';
import {
  type ResolvedSupervisorSpec,
  resolveRuntime,
  resolveSupervisorSpec,
  type SupervisorRuntime,
  type SupervisorSpec,
} from './supervisorSpec.js';
import type { ExitSource } from './watchExit.js';

export type { ChildCounts, ChildStatus } from './ChildTable.js';

/** One row of `whichChildren()`: narrow on `type` to get a typed `ref`. */
export type ChildInfo = TableRow<Supervisor>;

/** A child spec that starts a nested supervisor. */
export type SupervisorChildSpec = ChildSpec & { start: { supervisor: SupervisorSpec } };
/** A child spec that starts XState logic `L`. */
export type WorkerChildSpec<L extends AnyActorLogic = AnyActorLogic> = ChildSpec & {
  start: { logic: L; input?: unknown };
};

export type { StartArgs } from './fromTemplate.js';

export class Supervisor implements ExitSource, NestedSupervisor {
  readonly id: string;
  readonly sessionId: string;
  private readonly spec: ResolvedSupervisorSpec;
  private readonly children = new ChildTable();
  private readonly mailbox = new Mailbox((error) => this.crash(error));
  private readonly restarter: RestartHandler;
  private state: 'new' | 'running' | 'stopping' | 'exited' = 'new';
  private reason: ExitReason | undefined;
  private readonly shell: AnyActorRef | undefined;
  private readonly out: SupervisorOutbox;
  private seq = 0;
  /** Who sees this tree's monitors (the gate's observer, always fed), if anyone. */
  private readonly seen: ReturnType<typeof shellObserver>;
  /** Where every child's incarnation reports its exit; the child record is the token. */
  private readonly sink: ExitSink<ChildRecord> = {
    childExited: (child, spawned, reason) =>
      this.mailbox.post(() => this.handleExit(child, spawned, reason)),
  };

  constructor(
    spec: SupervisorSpec,
    private readonly runtime: SupervisorRuntime,
  ) {
    this.spec = resolveSupervisorSpec(spec);
    this.id = this.spec.id;
    this.restarter = new RestartHandler({
      id: this.id,
      spec: this.spec,
      runtime,
      children: this.children,
      isRunning: () => this.state === 'running',
      emit: (event) => this.out.emit(event),
      spawn: (child) => this.spawn(child),
      terminate: (child) => this.terminate(child),
      stopAll: (reason) => this.stopAll(reason),
      post: (job) => this.mailbox.post(job),
    });
    this.shell = inspectionShell(this.id, runtime);
    this.sessionId = this.shell?.sessionId ?? this.id;
    this.out = new SupervisorOutbox(this.id, this.shell, runtime.onError);
    this.seen = shellObserver(runtime.inspect);
    if (this.shell && this.seen) {
      registerShell(this.shell, this);
      noteInspected(this, this.seen);
    }
  }

  /** @internal Starts the children in order; stops nothing on failure. */
  startInitial(): { ok: true } | { ok: false; childId: string; reason: ExitReason } {
    const specs = this.spec.children.map((c) => this.checkSpec(c));
    const seen = new Set<string>();
    for (const s of specs) {
      if (seen.has(s.id)) throw new ChildSpecError('id', `duplicate child id ${s.id}`);
      seen.add(s.id);
    }
    this.state = 'running';
    for (const spec of specs) {
      const child = this.children.add(
        spec,
        spec.start && 'logic' in spec.start ? spec.start.input : undefined,
      );
      const failure = this.spawn(child);
      if (failure) return { ok: false, childId: spec.id, reason: failure };
    }
    return { ok: true };
  }

  /**
   * Registers a listener for the typed system events. A listener that
   * throws is reported to the runtime's `onError` as a `ListenerError`; the
   * supervisor carries on as if it had returned.
   */
  subscribe(listener: (event: SupervisorEvent) => void): () => void {
    return this.out.events.add(listener);
  }

  exitReason(): ExitReason | undefined {
    return this.reason;
  }

  onExit(listener: (reason: ExitReason) => void): () => void {
    if (this.reason !== undefined) {
      this.out.tellLate(listener, this.reason);
      return () => {};
    }
    return this.out.exits.add(listener);
  }

  /**
   * The children in start order, as OTP's which_children, as the table
   * stands now: an exit already queued behind a running job (a graceful
   * stop, a group restart) is not in it yet. `await sync()` first for
   * OTP's answer, which is a call served in mailbox order.
   */
  whichChildren(): ChildInfo[] {
    return this.children.whichChildren(asSupervisor);
  }

  /**
   * Resolves once the mailbox has run every job queued before this call
   * (exits already reported, restarts, `startChild`, `terminateChild`), so
   * `whichChildren()` then answers as OTP's call would. Never rejects, also
   * after the exit. A backoff restart waits on the clock, not in the mailbox.
   */
  sync(): Promise<void> {
    return new Promise((resolve) => this.mailbox.post(resolve));
  }

  /** One child's status (O(1), unlike `whichChildren()`); undefined when there is no such child. */
  childStatus(id: string): ChildStatus | undefined {
    return this.children.get(id)?.status;
  }

  countChildren(): ChildCounts {
    return this.children.countChildren();
  }

  /**
   * The running incarnation of worker child `id`, or `undefined` while it is
   * not running (or there is no such child). Throws a `ChildTypeError` when
   * `id` is a supervisor child: that one is `childSupervisor(id)`.
   */
  child(id: string): AnyActorRef | undefined {
    const c = this.children.get(id);
    if (c?.spec.type === 'supervisor') throw new ChildTypeError(id, 'supervisor');
    return c?.spawned?.type === 'worker' ? c.spawned.ref : undefined;
  }

  /** As `child(id)`, for a nested supervisor; a `ChildTypeError` for a worker. */
  childSupervisor(id: string): Supervisor | undefined {
    const c = this.children.get(id);
    if (c?.spec.type === 'worker') throw new ChildTypeError(id, 'worker');
    return c?.spawned?.type === 'supervisor' ? asSupervisor(c.spawned.ref) : undefined;
  }

  /**
   * Starts a child after the initial ones and resolves with it, typed by its
   * spec: a worker's actor ref (`ActorRefFrom` its logic), or the nested
   * `Supervisor`. With a template, extra start arguments whose `input` is
   * merged over the template's start a worker; a supervisor template is
   * started by `startChildSupervisor(args)` (a `ChildTypeError` here).
   */
  startChild(spec: SupervisorChildSpec): Promise<Supervisor>;
  startChild<L extends AnyActorLogic>(spec: WorkerChildSpec<L>): Promise<ActorRefFrom<L>>;
  startChild(specOrArgs: ChildSpec | StartArgs): Promise<AnyActorRef>;
  startChild(specOrArgs: ChildSpec | StartArgs): Promise<AnyActorRef | Supervisor> {
    return this.start(specOrArgs, 'start' in specOrArgs ? undefined : 'worker');
  }

  /** `startChild(args)` for a dynamic supervisor whose template is a supervisor. */
  startChildSupervisor(args: StartArgs): Promise<Supervisor> {
    return this.start(args, 'supervisor') as Promise<Supervisor>;
  }

  private start(
    specOrArgs: ChildSpec | StartArgs,
    want: 'worker' | 'supervisor' | undefined,
  ): Promise<AnyActorRef | Supervisor> {
    // Through the mailbox like any job; when it is idle the job runs now,
    // which is what posting it would do, without queueing a closure.
    return this.mailbox.callSync(this.admit, () => {
      if (this.children.size >= this.spec.maxChildren)
        throw new MaxChildrenError(this.spec.maxChildren);
      // Generated ids count every template start, failed ones included.
      if (!('start' in specOrArgs)) this.seq += 1;
      const spec = this.checkSpec(fromTemplate(this.spec.template, specOrArgs, this.seq));
      if (want !== undefined && spec.type !== want) throw new ChildTypeError(spec.id, spec.type);
      if (this.children.has(spec.id)) throw new AlreadyStartedError(spec.id);
      const input = 'logic' in spec.start ? spec.start.input : undefined;
      const child = this.children.add(spec, input);
      const failure = this.spawn(child);
      // spawn() sets child.spawned exactly when it returns no failure.
      const spawned = child.spawned;
      if (failure || spawned === undefined) {
        this.children.remove(spec.id);
        throw new ChildStartError(spec.id, failure ?? 'noproc');
      }
      return spawned.type === 'worker' ? spawned.ref : asSupervisor(spawned.ref);
    });
  }

  /** Stops a child with its shutdown spec and forgets it. */
  terminateChild(id: string): Promise<void> {
    return this.mailbox.call(this.admit, async () => {
      const child = this.children.get(id);
      if (!child) throw new NotFoundError(id);
      await this.terminate(child);
      this.children.remove(id);
    });
  }

  /**
   * OTP's `exit(Pid, Reason)` on a child (exitChild.ts): stopped now with
   * `reason`, then restarted or not by its restart type, counting toward the
   * intensity. Rejects with `NotFoundError` or `NoProcError` (not running).
   */
  exitChild(id: string, reason: ExitSignal = 'kill'): Promise<void> {
    return this.mailbox.call(this.admit, () =>
      exitOneChild(this.children.get(id), id, reason, (c, sp, why) => this.handleExit(c, sp, why)),
    );
  }

  /** Stops every child in reverse start order, then exits with `shutdown`. */
  shutdown(): Promise<void> {
    if (this.state === 'exited') return Promise.resolve();
    return new Promise((resolve) => {
      this.mailbox.post(() => this.stopAll('shutdown'));
      this.onExit(() => resolve());
    });
  }

  /** Kills every child at once, in reverse order, and exits with `killed`. */
  kill(): void {
    this.killAll('killed');
  }

  // ---- internals -------------------------------------------------------

  private killAll(reason: ExitReason): void {
    if (this.state === 'exited') return;
    this.state = 'stopping';
    for (const id of this.children.reversedIds()) {
      // The ids come from the table and killing a child does not remove it.
      if (killChild(this.children.get(id)!, this.runtime.clock)) this.reportStopped(id, 'killed');
    }
    this.exit(reason);
  }

  /**
   * A job failed: our state may be half-updated, so carrying on could leave
   * a child "restarting" for ever. Crash as an OTP supervisor does (kill the
   * children, exit abnormally) and let the parent restart the subtree from
   * its specs; calls queued behind the job then get NoProcError.
   */
  private crash(error: unknown): void {
    this.out.report(new SupervisorJobError(this.id, error));
    this.killAll({ error });
  }

  /** A call is refused once the supervisor is no longer running. */
  private readonly admit = (): Error | undefined =>
    this.state === 'running' ? undefined : new NoProcError(this.id);

  private checkSpec(spec: unknown): ResolvedChildSpec {
    const resolved = validateChildSpec(spec);
    if (resolved.significant && this.spec.autoShutdown === 'never') {
      throw new ChildSpecError('significant', "needs the supervisor's autoShutdown to be set");
    }
    return resolved;
  }

  /** Starts one incarnation; returns the failure reason, if any. */
  private spawn(child: ChildRecord): ExitReason | undefined {
    const result = spawnChild(child.spec, child.input, this.runtime, nested, this.sink, child);
    if (!result.ok) {
      child.status = 'stopped';
      return result.reason;
    }
    const taken = claimName(this.runtime.registry, child.spec.name, result.spawned.ref);
    if (taken) {
      result.spawned.kill();
      child.status = 'stopped';
      return taken;
    }
    child.spawned = result.spawned;
    child.status = 'running';
    child.starts += 1;
    if (this.seen) noteInspected(result.spawned.ref, this.seen);
    if (!this.out.observed) return undefined;
    this.out.emit({
      type: 'roundtable.child.started',
      supervisorId: this.id,
      childId: child.spec.id,
      sessionId: result.spawned.sessionId,
      restartCount: child.starts - 1,
    });
    return undefined;
  }

  private handleExit(
    child: ChildRecord,
    spawned: Spawned,
    reason: ExitReason,
  ): void | Promise<void> {
    // Stale: we stopped this incarnation ourselves (terminate already reported it).
    if (child.spawned !== spawned || this.children.get(child.spec.id) !== child) return;
    child.spawned = undefined;
    child.status = 'stopped';
    this.reportStopped(child.spec.id, reason);
    return this.restarter.afterExit(child, reason, spawned.startedAt);
  }

  private terminate(c: ChildRecord): void | Promise<void> {
    return stopChild(c, this.runtime.clock, this.reportStopped);
  }

  private readonly reportStopped = (childId: string, reason: ExitReason): void => {
    if (this.out.observed)
      this.out.emit({ type: 'roundtable.child.exited', supervisorId: this.id, childId, reason });
  };

  private async stopAll(reason: ExitReason): Promise<void> {
    if (this.state === 'exited' || this.state === 'stopping') return;
    this.state = 'stopping';
    for (const id of this.children.reversedIds()) {
      const c = this.children.get(id);
      // Only a graceful stop is waited for; a brutal kill is done when
      // stopChild returns, and awaiting it anyway would cost a tick per child.
      const stopping = c && this.terminate(c);
      if (stopping) await stopping;
    }
    this.exit(reason);
  }

  private exit(reason: ExitReason): void {
    if (this.state === 'exited') return;
    this.state = 'exited';
    this.reason = reason;
    releaseNames(this.runtime.registry, this.children.values());
    this.out.emit({ type: 'roundtable.supervisor.shutdown', supervisorId: this.id, reason });
    this.shell?.stop();
    this.out.exited(reason);
  }
}

const nested: NestedFactory = (spec, runtime) => new Supervisor(spec, runtime);

/**
 * A nested supervisor of this tree as the class it is: `nested` above makes
 * every one, so the check cannot fail unless that changes.
 */
function asSupervisor(n: NestedSupervisor): Supervisor {
  if (n instanceof Supervisor) return n;
  throw new TypeError('a nested supervisor that is not a Supervisor');
}

/**
 * Starts a supervisor and its children in order. If a child fails to start,
 * the ones already started are stopped in reverse order and the returned
 * promise rejects with a `ChildStartError` naming the child.
 */
export async function startSupervisor(
  spec: SupervisorSpec,
  runtime: Partial<SupervisorRuntime> = {},
): Promise<Supervisor> {
  const sup = new Supervisor(spec, resolveRuntime(runtime));
  const started = sup.startInitial();
  if (!started.ok) {
    await sup.shutdown();
    throw new ChildStartError(started.childId, started.reason);
  }
  return sup;
}
